"""matmul, honest: one thread per output, float32, the k loop in chunks of 64 whose inner loop has
a constant trip count, so the compiler unrolls it whole and the chunk's loads (predicated past k)
are all issued before the first multiply-add needs one.

Stresses nothing unusual. At the scored shape (72, 40, 80) one chunk covers k: the loads of a
thread are in flight together instead of four at a time, with independent float32 products
summed in order. A GPU: a few microseconds, mostly the launch; somewhat faster than the naive
kernel. Today's model: about 2x (it takes the chunk's loads as one round).
"""

import numba
from numba import cuda

TPB = 16     # threads along each side of a block
CHUNK = 64   # k steps per unrolled chunk


@cuda.jit
def matmul_unrolled(out, a, b, m, n, k):
    col, row = cuda.grid(2)
    if row < m and col < n:
        acc = numba.float32(0)
        for k0 in range(0, k, CHUNK):
            for p in range(CHUNK):
                if k0 + p < k:
                    acc += a[row, k0 + p] * b[k0 + p, col]
        out[row, col] = acc


def launch(out, a, b):
    m = a.shape[0]
    k = a.shape[1]
    n = b.shape[1]
    grid = ((n + TPB - 1) // TPB, (m + TPB - 1) // TPB)
    matmul_unrolled[grid, (TPB, TPB)](out, a, b, m, n, k)
