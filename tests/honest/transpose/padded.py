import numba
from numba import cuda

TILE = 4
TILE_PAD = 5


@cuda.jit
def kernel(out, a, rows, cols):
    tile = cuda.shared.array((TILE, TILE_PAD), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    if y < rows and x < cols:
        tile[ty, tx] = a[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + tx
    y = cuda.blockIdx.x * TILE + ty
    if y < cols and x < rows:
        out[y, x] = tile[tx, ty]
