from numba import cuda
import numba

TILE = 8


@cuda.jit
def kernel(out, a, b, m, k, n):
    a_tile = cuda.shared.array((TILE, TILE),
                               numba.float32)
    b_tile = cuda.shared.array((TILE, TILE),
                               numba.float32)
    i, j = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    # FILL ME IN (about 18 lines)
    pass
