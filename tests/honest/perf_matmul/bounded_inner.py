import numba
from numba import cuda

TILE = 16


@cuda.jit
def kernel(out, a, b, m, k, n):
    # Loads only what exists; the inner loop stops at k's end.
    sA = cuda.shared.array((TILE, TILE), numba.float32)
    sB = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * cuda.blockDim.y + ty
    col = cuda.blockIdx.x * cuda.blockDim.x + tx
    acc = 0.0
    for start in range(0, k, TILE):
        if row < m and start + tx < k:
            sA[ty, tx] = a[row, start + tx]
        if start + ty < k and col < n:
            sB[ty, tx] = b[start + ty, col]
        cuda.syncthreads()
        if row < m and col < n:
            for q in range(min(TILE, k - start)):
                acc += sA[ty, q] * sB[q, tx]
        cuda.syncthreads()
    if row < m and col < n:
        out[row, col] = acc
