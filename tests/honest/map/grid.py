from numba import cuda


@cuda.jit
def kernel(out, a):
    i = cuda.grid(1)
    x = a[i]
    out[i] = x + 10.0
