import numba
from numba import cuda

TILE = 32
BLOCK_ROWS = 8
TILE_PAD = 33


@cuda.jit
def kernel(out, a, rows, cols):
    # No padding: column c of tile row r is stored at c ^ r, so a row and a column both
    # visit the 32 banks once each.
    tile = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        r = ty + j
        tile[r, tx ^ r] = a[row + j, col]
    cuda.syncthreads()
    out_col = cuda.blockIdx.y * TILE + tx
    out_row = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        c = ty + j
        out[out_row + j, out_col] = tile[tx, c ^ tx]
