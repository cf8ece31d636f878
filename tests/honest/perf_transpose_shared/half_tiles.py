from numba import cuda
import numba

TILE = 32
BLOCK_ROWS = 8


@cuda.jit
def kernel(out, a, rows, cols):
    # A smaller tile: the block's 32 x 32 patch goes through a 16 x 32 tile in two halves of 16
    # rows. A half gives each row of `out` 16 neighbours (64 bytes, two whole sectors); a warp
    # writes two such runs, lanes 0-15 one row, lanes 16-31 the row 16 further on.
    tile = cuda.shared.array((16, 32), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * TILE + tx
    lane = t % 32
    warp = t // 32
    bx = cuda.blockIdx.x * TILE
    by = cuda.blockIdx.y * TILE
    for half in range(2):
        for r in range(ty, 16, BLOCK_ROWS):
            tile[r, tx] = a[by + half * 16 + r, bx + tx]
        cuda.syncthreads()
        for p in range(2):
            c = warp + 8 * p + 16 * (lane // 16)   # the patch's column: a row of `out`
            k = lane % 16
            out[bx + c, by + half * 16 + k] = tile[k, c]
        cuda.syncthreads()
