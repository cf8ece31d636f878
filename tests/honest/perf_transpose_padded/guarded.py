import numba
from numba import cuda

TILE = 32
BLOCK_ROWS = 8
TILE_PAD = 33


@cuda.jit
def kernel(out, a, rows, cols):
    tile = cuda.shared.array((TILE, TILE_PAD), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx
    for r in range(TILE // BLOCK_ROWS):
        ly = ty + r * BLOCK_ROWS
        row = cuda.blockIdx.y * TILE + ly
        if row < rows and col < cols:
            tile[ly, tx] = a[row, col]
    cuda.syncthreads()
    out_col = cuda.blockIdx.y * TILE + tx
    for r in range(TILE // BLOCK_ROWS):
        ly = ty + r * BLOCK_ROWS
        out_row = cuda.blockIdx.x * TILE + ly
        if out_row < cols and out_col < rows:
            out[out_row, out_col] = tile[tx, ly]
