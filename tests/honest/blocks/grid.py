from numba import cuda


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    if i >= size:
        return
    out[i] = a[i] + 10
