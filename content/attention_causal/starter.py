from numba import cuda
import numba
import math

D = 8


@cuda.jit
def kernel(out, q, k, v, size):
    i = cuda.blockIdx.x      # the query row this block owns
    d = cuda.threadIdx.x     # the output column this thread owns
    q_row = cuda.shared.array(D, numba.float32)
    k_row = cuda.shared.array(D, numba.float32)
    # FILL ME IN (about 20 lines)
    pass
