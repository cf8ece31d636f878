import numba
from numba import cuda

TILE = 16


@cuda.jit
def kernel(out, a, b, m, k, n):
    sA = cuda.shared.array((TILE, TILE), numba.float32)
    sB = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col, row = cuda.grid(2)
    acc = numba.float32(0)
    for t in range(0, k, TILE):
        sA[ty, tx] = a[row, t + tx] if row < m and t + tx < k else 0
        sB[ty, tx] = b[t + ty, col] if t + ty < k and col < n else 0
        cuda.syncthreads()
        for q in range(TILE):
            acc += sA[ty, q] * sB[q, tx]
        cuda.syncthreads()
    if row < m and col < n:
        out[row, col] = acc
