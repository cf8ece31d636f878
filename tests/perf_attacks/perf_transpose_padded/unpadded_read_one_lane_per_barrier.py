"""An unpadded 32 x 32 tile whose column read is spread over 32 barrier phases, one lane in each:
no instruction has two lanes, so none conflicts, and within a phase each warp's read is all its
busiest lane needs. The warp still takes 32 wavefronts (and 32 barriers) for what one wavefront of
a padded tile serves: 32 times the shared requests."""

from numba import cuda
import numba

TILE = 32
BLOCK_ROWS = 8
TILE_PAD = 33


@cuda.jit
def kernel(out, a, rows, cols):
    tile = cuda.shared.array((TILE, TILE), numba.float32)
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
        v = numba.float32(0)
        for lane in range(TILE):
            if tx == lane:
                v = tile[tx, ty + j]
            cuda.syncthreads()
        out[out_row + j, out_col] = v
