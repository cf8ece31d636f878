from numba import cuda
import numba

TILE = 32
BLOCK_ROWS = 8
TILE_PAD = 33


@cuda.jit
def kernel(out, a, rows, cols):
    # The padded tile as one flat array, indexed by hand: cell (r, c) at r * TILE_PAD + c.
    tile = cuda.shared.array(1056, numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    src_row = cuda.blockIdx.y * TILE
    src_col = cuda.blockIdx.x * TILE
    for j in range(0, TILE, BLOCK_ROWS):
        tile[(ty + j) * TILE_PAD + tx] = a[src_row + ty + j, src_col + tx]
    cuda.syncthreads()
    for j in range(0, TILE, BLOCK_ROWS):
        out[src_col + ty + j, src_row + tx] = tile[tx * TILE_PAD + ty + j]
