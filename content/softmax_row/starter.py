from numba import cuda
import numba
import math

TPB = 16


@cuda.jit
def kernel(out, a, cols):
    row = cuda.blockIdx.x
    c = cuda.threadIdx.x
    cache = cuda.shared.array(TPB, numba.float32)
    # FILL ME IN (about 25 lines)
    pass
