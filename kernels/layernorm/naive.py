import math

from numba import cuda

TPB = 128
EPS = 1e-5


@cuda.jit
def layernorm_rows(out, x, gamma, beta, rows, cols):
    # One thread per row: mean, variance about the mean, then the write.
    r = cuda.grid(1)
    if r < rows:
        s = 0.0
        for c in range(cols):
            s += x[r, c]
        mean = s / cols
        v = 0.0
        for c in range(cols):
            d = x[r, c] - mean
            v += d * d
        rstd = 1.0 / math.sqrt(v / cols + EPS)
        for c in range(cols):
            out[r, c] = (x[r, c] - mean) * rstd * gamma[c] + beta[c]


def launch(out, x, gamma, beta):
    rows = x.shape[0]
    cols = x.shape[1]
    layernorm_rows[(rows + TPB - 1) // TPB, TPB](out, x, gamma, beta, rows, cols)
