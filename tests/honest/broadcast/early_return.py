from numba import cuda


@cuda.jit
def kernel(out, a, b, size):
    i, j = cuda.grid(2)
    if i >= size or j >= size:
        return
    left = a[i, 0]
    top = b[0, j]
    out[i, j] = left + top
