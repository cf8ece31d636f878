from numba import cuda

TPB = 16


@cuda.jit
def matmul_one_per_output(out, a, b, m, n, k):
    # One thread per output element: a dot product of a row of a and a column of b.
    col, row = cuda.grid(2)
    if row < m and col < n:
        acc = 0.0
        for p in range(k):
            acc += a[row, p] * b[p, col]
        out[row, col] = acc


def launch(out, a, b):
    m = a.shape[0]
    k = a.shape[1]
    n = b.shape[1]
    grid = ((n + TPB - 1) // TPB, (m + TPB - 1) // TPB)
    matmul_one_per_output[grid, (TPB, TPB)](out, a, b, m, n, k)
