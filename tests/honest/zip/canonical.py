from numba import cuda


@cuda.jit
def kernel(out, a, b):
    local_i = cuda.threadIdx.x
    out[local_i] = a[local_i] + b[local_i]
