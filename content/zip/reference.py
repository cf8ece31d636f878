from numba import cuda


@cuda.jit
def kernel(out, a, b):
    # The thread's number selects the same position
    # in every array.
    local_i = cuda.threadIdx.x
    # Two reads (one from each input) and one write.
    out[local_i] = a[local_i] + b[local_i]
