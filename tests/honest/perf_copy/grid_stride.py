from numba import cuda

TPB = 64
CHUNK = 4


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < size:
        out[i] = a[i]
        i += stride
