from numba import cuda
import numba
import math

D = 8


@cuda.jit
def kernel(out, q, k, v, size):
    i = cuda.blockIdx.x   # this block's query row
    d = cuda.threadIdx.x  # this thread's output column
    q_row = cuda.shared.array(D, numba.float32)
    k_row = cuda.shared.array(D, numba.float32)
    # FILL ME IN (about 20 lines)
    pass
