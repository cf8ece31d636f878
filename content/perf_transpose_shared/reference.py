from numba import cuda
import numba

TILE = 32        # the block's patch: TILE x TILE
BLOCK_ROWS = 8   # rows of threads: each does 4 rows


@cuda.jit
def kernel(out, a, rows, cols):
    # One 32 x 32 patch of `a`, staged on chip. (The
    # next puzzle shows what this shape costs in bank
    # conflicts; here only global memory is judged.)
    tile = cuda.shared.array((TILE, TILE),
                             numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y

    # Load: x walks along a row of `a`, so a warp
    # (one row of 32 threads) reads 32 neighbouring
    # floats: 4 sectors, fully used. The block has 8
    # rows of threads, so each thread loads 4 rows of
    # the patch, 8 apart.
    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        tile[ty + j, tx] = a[row + j, col]

    # The whole patch must be in the tile before any
    # thread reads what another thread wrote.
    cuda.syncthreads()

    # Store: block (bx, by) of `a` is block (by, bx)
    # of `out`. Again x walks along a row, of `out`
    # this time, so the stores are coalesced too. The
    # mirror happens on chip: the tile is read at
    # [tx, ty + j], down one of its columns.
    out_col = cuda.blockIdx.y * TILE + tx
    out_row = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        out[out_row + j, out_col] = tile[tx, ty + j]
