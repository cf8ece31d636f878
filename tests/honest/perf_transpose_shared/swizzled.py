from numba import cuda
import numba

TILE = 32
BLOCK_ROWS = 8


@cuda.jit
def kernel(out, a, rows, cols):
    # Row r of the tile keeps column c at c ^ r; the read undoes it.
    tile = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    for j in range(0, TILE, BLOCK_ROWS):
        r = ty + j
        tile[r, tx ^ r] = a[cuda.blockIdx.y * TILE + r, cuda.blockIdx.x * TILE + tx]
    cuda.syncthreads()
    for j in range(0, TILE, BLOCK_ROWS):
        r = ty + j
        out[cuda.blockIdx.x * TILE + r, cuda.blockIdx.y * TILE + tx] = tile[tx, r ^ tx]
