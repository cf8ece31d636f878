import numba
from numba import cuda

TILE = 32
BLOCK_ROWS = 8


@cuda.jit
def kernel(out, a, rows, cols):
    # Bounds checks on every access, as for shapes that are not whole tiles.
    tile = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx
    for r in range(TILE // BLOCK_ROWS):
        ly = ty + r * BLOCK_ROWS
        row = cuda.blockIdx.y * TILE + ly
        if row < rows and col < cols:
            tile[ly, tx] = a[row, col]
    cuda.syncthreads()
    out_col = cuda.blockIdx.y * TILE + tx
    for r in range(TILE // BLOCK_ROWS):
        ly = ty + r * BLOCK_ROWS
        out_row = cuda.blockIdx.x * TILE + ly
        if out_row < cols and out_col < rows:
            out[out_row, out_col] = tile[tx, ly]
