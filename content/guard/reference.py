from numba import cuda


@cuda.jit
def kernel(out, a, size):
    local_i = cuda.threadIdx.x
    # The launch may have more threads than elements.
    # Threads past the end of the array have no
    # element, so they must not touch memory at all.
    if local_i < size:
        out[local_i] = a[local_i] + 10
