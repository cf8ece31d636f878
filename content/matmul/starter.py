import numba
from numba import cuda

TPB = 3


@cuda.jit
def kernel(out, a, b, size):
    # Two TPB x TPB tiles: one square of a and one
    # square of b at a time.
    a_tile = cuda.shared.array((TPB, TPB),
                               numba.float32)
    b_tile = cuda.shared.array((TPB, TPB),
                               numba.float32)
    i, j = cuda.grid(2)
    local_i = cuda.threadIdx.x
    local_j = cuda.threadIdx.y
    # FILL ME IN (about 16 lines)
    pass
