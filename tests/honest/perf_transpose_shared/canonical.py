import numba
from numba import cuda

TILE = 32
BLOCK_ROWS = 8


@cuda.jit
def kernel(out, a, rows, cols):
    tile = cuda.shared.array((TILE, TILE), numba.float32)
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, BLOCK_ROWS):
        tile[cuda.threadIdx.y + j, cuda.threadIdx.x] = a[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    for j in range(0, TILE, BLOCK_ROWS):
        out[y + j, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + j]
