import math

from numba import cuda

TPB = 128


@cuda.jit
def softmax_rows(out, x, rows, cols):
    # One thread per row: max, sum of shifted exponentials, then the normalised write.
    r = cuda.grid(1)
    if r < rows:
        m = x[r, 0]
        for c in range(1, cols):
            if x[r, c] > m:
                m = x[r, c]
        s = 0.0
        for c in range(cols):
            s += math.exp(x[r, c] - m)
        for c in range(cols):
            out[r, c] = math.exp(x[r, c] - m) / s


def launch(out, x):
    rows = x.shape[0]
    cols = x.shape[1]
    softmax_rows[(rows + TPB - 1) // TPB, TPB](out, x, rows, cols)
