from numba import cuda


@cuda.jit
def kernel(out, a):
    local_i = cuda.threadIdx.x
    out[local_i] = a[local_i] + 10
