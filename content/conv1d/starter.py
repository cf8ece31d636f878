import numba
from numba import cuda

TPB = 8
MAX_CONV = 4
TPB_MAX_CONV = 12


@cuda.jit
def kernel(out, a, b, a_size, b_size):
    # The block's TPB elements of a, followed by the
    # halo after them.
    a_shared = cuda.shared.array(TPB_MAX_CONV,
                                 numba.float32)
    # The whole of b (at most MAX_CONV elements).
    b_shared = cuda.shared.array(MAX_CONV,
                                 numba.float32)
    i = cuda.grid(1)
    local_i = cuda.threadIdx.x
    # FILL ME IN (about 20 lines)
    pass
