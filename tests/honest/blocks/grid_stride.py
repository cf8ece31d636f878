from numba import cuda


@cuda.jit
def kernel(out, a, size):
    # A grid-stride loop: with just enough blocks it runs once per thread.
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, size, stride):
        out[i] = a[i] + 10
