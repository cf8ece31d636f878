from numba import cuda


@cuda.jit
def kernel(out, a, size):
    local_i = cuda.threadIdx.x
    if local_i < size:
        out[local_i] = a[local_i] + 10
