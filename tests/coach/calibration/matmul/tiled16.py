"""matmul, honest: the textbook shared-memory tiling. A 16 x 16 block computes a 16 x 16 tile of
out, one element a thread, walking k in steps of 16: each step stages a 16 x 16 tile of a and of
b in shared memory (one coalesced load a thread), a barrier, 16 float32 multiply-adds from shared
memory, a barrier.

Stresses nothing unusual. At the scored shape (72, 40, 80) that is three global rounds a thread
instead of the naive kernel's ten, and float32 instead of a float64 running sum. A GPU: a few
microseconds, mostly the launch; somewhat faster than the naive kernel.
"""

import numba
from numba import cuda

TILE = 16


@cuda.jit
def matmul_tiles(out, a, b, m, n, k):
    a_s = cuda.shared.array((TILE, TILE), numba.float32)
    b_s = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty
    acc = numba.float32(0)
    for k0 in range(0, k, TILE):
        x = numba.float32(0)
        if row < m and k0 + tx < k:
            x = a[row, k0 + tx]
        a_s[ty, tx] = x
        y = numba.float32(0)
        if k0 + ty < k and col < n:
            y = b[k0 + ty, col]
        b_s[ty, tx] = y
        cuda.syncthreads()
        for p in range(TILE):
            acc += a_s[ty, p] * b_s[p, tx]
        cuda.syncthreads()
    if row < m and col < n:
        out[row, col] = acc


def launch(out, a, b):
    m = a.shape[0]
    k = a.shape[1]
    n = b.shape[1]
    grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE)
    matmul_tiles[grid, (TILE, TILE)](out, a, b, m, n, k)
