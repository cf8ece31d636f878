"""matmul, honest: one thread per four adjacent outputs of a row, in float32. Each trip over k
loads a[row, p] once and four neighbouring elements of b's row p, and updates four independent
float32 sums (the naive kernel keeps one float64 sum a thread, 40 dependent double additions).

Stresses nothing unusual: a quarter of the naive kernel's threads, each with four independent
FMA chains and the same number of trips. A GPU: a few microseconds, mostly the launch; about as
fast as the naive kernel or a little faster.
"""

import numba
from numba import cuda

TPB = 16    # threads along each side of a block
COLS = 4    # adjacent output columns per thread


@cuda.jit
def matmul_four_columns(out, a, b, m, n, k):
    t, row = cuda.grid(2)
    col = t * COLS
    if row < m and col < n:
        s0 = numba.float32(0)
        s1 = numba.float32(0)
        s2 = numba.float32(0)
        s3 = numba.float32(0)
        for p in range(k):
            x = a[row, p]
            s0 += x * b[p, col]
            if col + 1 < n:
                s1 += x * b[p, col + 1]
            if col + 2 < n:
                s2 += x * b[p, col + 2]
            if col + 3 < n:
                s3 += x * b[p, col + 3]
        out[row, col] = s0
        if col + 1 < n:
            out[row, col + 1] = s1
        if col + 2 < n:
            out[row, col + 2] = s2
        if col + 3 < n:
            out[row, col + 3] = s3


def launch(out, a, b):
    m = a.shape[0]
    k = a.shape[1]
    n = b.shape[1]
    across = (n + COLS - 1) // COLS
    grid = ((across + TPB - 1) // TPB, (m + TPB - 1) // TPB)
    matmul_four_columns[grid, (TPB, TPB)](out, a, b, m, n, k)
