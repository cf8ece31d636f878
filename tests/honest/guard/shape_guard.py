from numba import cuda


@cuda.jit
def kernel(out, a, size):
    # Guard with the array's own length instead of the size argument.
    i = cuda.threadIdx.x
    if i < a.shape[0]:
        out[i] = a[i] + 10
