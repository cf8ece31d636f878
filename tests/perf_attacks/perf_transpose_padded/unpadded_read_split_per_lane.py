"""An unpadded 32 x 32 tile, its column read split into one line per lane: each request is one
lane and one wavefront, so no request conflicts, while the warp still takes 32 wavefronts for
what one wavefront of a padded tile serves."""

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
        if tx == 0:
            v = tile[tx, ty + j]
        if tx == 1:
            v = tile[tx, ty + j]
        if tx == 2:
            v = tile[tx, ty + j]
        if tx == 3:
            v = tile[tx, ty + j]
        if tx == 4:
            v = tile[tx, ty + j]
        if tx == 5:
            v = tile[tx, ty + j]
        if tx == 6:
            v = tile[tx, ty + j]
        if tx == 7:
            v = tile[tx, ty + j]
        if tx == 8:
            v = tile[tx, ty + j]
        if tx == 9:
            v = tile[tx, ty + j]
        if tx == 10:
            v = tile[tx, ty + j]
        if tx == 11:
            v = tile[tx, ty + j]
        if tx == 12:
            v = tile[tx, ty + j]
        if tx == 13:
            v = tile[tx, ty + j]
        if tx == 14:
            v = tile[tx, ty + j]
        if tx == 15:
            v = tile[tx, ty + j]
        if tx == 16:
            v = tile[tx, ty + j]
        if tx == 17:
            v = tile[tx, ty + j]
        if tx == 18:
            v = tile[tx, ty + j]
        if tx == 19:
            v = tile[tx, ty + j]
        if tx == 20:
            v = tile[tx, ty + j]
        if tx == 21:
            v = tile[tx, ty + j]
        if tx == 22:
            v = tile[tx, ty + j]
        if tx == 23:
            v = tile[tx, ty + j]
        if tx == 24:
            v = tile[tx, ty + j]
        if tx == 25:
            v = tile[tx, ty + j]
        if tx == 26:
            v = tile[tx, ty + j]
        if tx == 27:
            v = tile[tx, ty + j]
        if tx == 28:
            v = tile[tx, ty + j]
        if tx == 29:
            v = tile[tx, ty + j]
        if tx == 30:
            v = tile[tx, ty + j]
        if tx == 31:
            v = tile[tx, ty + j]
        out[out_row + j, out_col] = v
