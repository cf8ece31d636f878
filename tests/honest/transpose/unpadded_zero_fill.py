import numba
from numba import cuda

TILE = 4
TILE_PAD = 5


@cuda.jit
def kernel(out, a, rows, cols):
    # A plain TILE x TILE tile, every cell written (0 past the edges).
    tile = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bx = cuda.blockIdx.x
    by = cuda.blockIdx.y
    r = by * TILE + ty
    c = bx * TILE + tx
    tile[ty, tx] = a[r, c] if r < rows and c < cols else 0
    cuda.syncthreads()
    out_r = bx * TILE + ty
    out_c = by * TILE + tx
    if out_r < cols and out_c < rows:
        out[out_r, out_c] = tile[tx, ty]
