from numba import cuda
import numba

TILE = 4
# TILE + 1: a tile row plus one column of padding.
TILE_PAD = 5


@cuda.jit
def kernel(out, a, rows, cols):
    # The block's staging tile. The extra column means
    # that walking DOWN a column of the tile touches a
    # different shared memory bank at every step, so
    # the transposed read below does not make the
    # threads queue for one bank.
    tile = cuda.shared.array((TILE, TILE_PAD),
                             numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y

    # Load: x walks along the columns of `a`. Threads
    # next to each other in x read elements next to
    # each other in memory (a row of a row-major
    # array), which the hardware coalesces.
    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty
    if row < rows and col < cols:
        tile[ty, tx] = a[row, col]

    # Every element of the tile must be in place
    # before any thread reads a cell it did not write.
    cuda.syncthreads()

    # Store: block (bx, by) of `a` becomes block
    # (by, bx) of `out`. Again x walks along a row,
    # this time a row of `out`, so the writes are
    # coalesced too. The swap of rows and columns
    # happens in shared memory, by reading the tile
    # at [tx, ty] instead of [ty, tx].
    out_row = cuda.blockIdx.x * TILE + ty
    out_col = cuda.blockIdx.y * TILE + tx
    if out_row < cols and out_col < rows:
        out[out_row, out_col] = tile[tx, ty]
