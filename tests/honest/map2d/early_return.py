from numba import cuda


@cuda.jit
def kernel(out, a, size):
    i, j = cuda.grid(2)
    if i >= size or j >= size:
        return
    out[i, j] = a[i, j] + 10
