import numba
from numba import cuda

TILE = 4
TILE_PAD = 5


@cuda.jit
def kernel(out, a, rows, cols):
    tile = cuda.shared.array((TILE, TILE_PAD), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col, row = cuda.grid(2)
    if row < rows and col < cols:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    # After the only barrier, threads with no output cell may leave.
    out_row = col - tx + ty
    out_col = row - ty + tx
    if out_row >= cols or out_col >= rows:
        return
    out[out_row, out_col] = tile[tx, ty]
