from numba import cuda
import numba

TILE = 32        # the block's patch: TILE x TILE
BLOCK_ROWS = 8   # rows of threads: each does 4 rows


@cuda.jit
def kernel(out, a, rows, cols):
    # Correct, but the stores are scattered: lanes
    # next to each other in x write elements a whole
    # row of `out` apart.
    # FILL ME IN (about 12 lines): stage the patch in
    # a shared tile so both sides run along rows.
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, BLOCK_ROWS):
        out[col, row + j] = a[row + j, col]
