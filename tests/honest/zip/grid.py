from numba import cuda


@cuda.jit
def kernel(out, a, b):
    i = cuda.grid(1)
    x = a[i]
    y = b[i]
    out[i] = x + y
