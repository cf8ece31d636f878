from numba import cuda
import numba

TILE = 4
# TILE + 1: a tile row plus one column of padding.
TILE_PAD = 5


@cuda.jit
def kernel(out, a, rows, cols):
    # One extra column of padding: see the lesson on
    # shared memory banks.
    tile = cuda.shared.array((TILE, TILE_PAD),
                             numba.float32)
    # FILL ME IN (about 11 lines)
    pass
