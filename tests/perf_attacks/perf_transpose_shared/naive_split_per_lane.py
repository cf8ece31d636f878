"""A naive transpose with no tile, each lane's store on a line of its own: every store request
is one lane and one sector, ideal by a per-request ratio, while a warp's 32 stores still pull
32 sectors where 4 would hold the data."""

from numba import cuda
import numba

TILE = 32
BLOCK_ROWS = 8


@cuda.jit
def kernel(out, a, rows, cols):
    lane = cuda.threadIdx.x
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, BLOCK_ROWS):
        v = a[row + j, col]
        if lane == 0:
            out[col, row + j] = v
        if lane == 1:
            out[col, row + j] = v
        if lane == 2:
            out[col, row + j] = v
        if lane == 3:
            out[col, row + j] = v
        if lane == 4:
            out[col, row + j] = v
        if lane == 5:
            out[col, row + j] = v
        if lane == 6:
            out[col, row + j] = v
        if lane == 7:
            out[col, row + j] = v
        if lane == 8:
            out[col, row + j] = v
        if lane == 9:
            out[col, row + j] = v
        if lane == 10:
            out[col, row + j] = v
        if lane == 11:
            out[col, row + j] = v
        if lane == 12:
            out[col, row + j] = v
        if lane == 13:
            out[col, row + j] = v
        if lane == 14:
            out[col, row + j] = v
        if lane == 15:
            out[col, row + j] = v
        if lane == 16:
            out[col, row + j] = v
        if lane == 17:
            out[col, row + j] = v
        if lane == 18:
            out[col, row + j] = v
        if lane == 19:
            out[col, row + j] = v
        if lane == 20:
            out[col, row + j] = v
        if lane == 21:
            out[col, row + j] = v
        if lane == 22:
            out[col, row + j] = v
        if lane == 23:
            out[col, row + j] = v
        if lane == 24:
            out[col, row + j] = v
        if lane == 25:
            out[col, row + j] = v
        if lane == 26:
            out[col, row + j] = v
        if lane == 27:
            out[col, row + j] = v
        if lane == 28:
            out[col, row + j] = v
        if lane == 29:
            out[col, row + j] = v
        if lane == 30:
            out[col, row + j] = v
        if lane == 31:
            out[col, row + j] = v
