import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    shared = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    local_i = cuda.threadIdx.x

    # Each element of a is read from global memory
    # exactly once, by the thread that owns it.
    if i < size:
        shared[local_i] = a[i]
    else:
        shared[local_i] = 0

    # After this barrier every thread can see its
    # neighbours' values.
    cuda.syncthreads()

    if i < size:
        # The window is a[i-2], a[i-1], a[i],
        # cut off at the start of the array.
        total = shared[local_i]
        if local_i >= 1:
            total += shared[local_i - 1]
        if local_i >= 2:
            total += shared[local_i - 2]
        out[i] = total
