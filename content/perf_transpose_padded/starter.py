from numba import cuda
import numba

TILE = 32        # the block's patch: TILE x TILE
BLOCK_ROWS = 8   # rows of threads: each does 4 rows
# TILE + 1: a tile row plus one column of padding.
TILE_PAD = 33


@cuda.jit
def kernel(out, a, rows, cols):
    # Correct and coalesced, but every column read of
    # this tile queues 32 lanes on one bank.
    # FILL ME IN (about 1 line): change the tile.
    tile = cuda.shared.array((TILE, TILE),
                             numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y

    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        tile[ty + j, tx] = a[row + j, col]

    cuda.syncthreads()

    out_col = cuda.blockIdx.y * TILE + tx
    out_row = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        out[out_row + j, out_col] = tile[tx, ty + j]
