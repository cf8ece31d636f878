from numba import cuda
import numba

TILE = 32
BLOCK_ROWS = 8
TILE_PAD = 33


@cuda.jit
def kernel(out, a, rows, cols):
    # A 16 x 33 tile: the block's 32 x 32 patch in two halves of 16 rows. Lanes 0-15 of a warp
    # read tile column c, lanes 16-31 column c + 16: words 33 k + c and 33 k + c + 16, in banks
    # k + c and k + c + 16, 32 different banks.
    tile = cuda.shared.array((16, TILE_PAD), numba.float32)
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
            c = warp + 8 * p + 16 * (lane // 16)
            k = lane % 16
            out[bx + c, by + half * 16 + k] = tile[k, c]
        cuda.syncthreads()
