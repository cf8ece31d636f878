from numba import cuda
import numba

TILE = 32
BLOCK_ROWS = 8


@cuda.jit
def kernel(out, a, rows, cols):
    # A padded tile is allowed here too (the budget holds TILE * (TILE + 1)).
    tile = cuda.shared.array((32, 33), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bx = cuda.blockIdx.x * TILE
    by = cuda.blockIdx.y * TILE
    for j in range(ty, TILE, BLOCK_ROWS):
        tile[j, tx] = a[by + j, bx + tx]
    cuda.syncthreads()
    for j in range(ty, TILE, BLOCK_ROWS):
        out[bx + j, by + tx] = tile[tx, j]
