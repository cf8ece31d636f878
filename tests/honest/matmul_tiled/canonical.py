import numba
from numba import cuda

TILE = 8


@cuda.jit
def kernel(out, a, b, m, k, n):
    sa = cuda.shared.array((TILE, TILE), numba.float32)
    sb = cuda.shared.array((TILE, TILE), numba.float32)
    row, col = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = numba.float32(0)
    for t in range((k + TILE - 1) // TILE):
        if row < m and t * TILE + ty < k:
            sa[tx, ty] = a[row, t * TILE + ty]
        else:
            sa[tx, ty] = 0
        if t * TILE + tx < k and col < n:
            sb[tx, ty] = b[t * TILE + tx, col]
        else:
            sb[tx, ty] = 0
        cuda.syncthreads()
        for q in range(TILE):
            acc += sa[tx, q] * sb[q, ty]
        cuda.syncthreads()
    if row < m and col < n:
        out[row, col] = acc
