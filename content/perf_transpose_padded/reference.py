from numba import cuda
import numba

TILE = 32        # the block's patch: TILE x TILE
BLOCK_ROWS = 8   # rows of threads: each does 4 rows
# TILE + 1: a tile row plus one column of padding.
TILE_PAD = 33


@cuda.jit
def kernel(out, a, rows, cols):
    # Shared memory is 32 banks of 4-byte words: word
    # w lives in bank w % 32. In a 32-wide tile, row
    # r starts at word 32 * r, so a whole column sits
    # in one bank. With rows 33 words long, row r
    # starts in bank r % 32: walking down a column
    # visits every bank once. The extra column holds
    # nothing; it only shifts the rows.
    tile = cuda.shared.array((TILE, TILE_PAD),
                             numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y

    # Load along a row of `a` (coalesced), store
    # along a row of the tile: lane tx hits word
    # (ty + j) * 33 + tx, 32 different banks.
    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        tile[ty + j, tx] = a[row + j, col]

    cuda.syncthreads()

    # The column read: lane tx hits word
    # tx * 33 + ty + j, in bank (tx + ty + j) % 32.
    # The 32 lanes of the warp get 32 different banks,
    # one wavefront, where the unpadded tile took 32.
    out_col = cuda.blockIdx.y * TILE + tx
    out_row = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        out[out_row + j, out_col] = tile[tx, ty + j]
