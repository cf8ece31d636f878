from numba import cuda


@cuda.jit
def kernel(out, a, size):
    # A 2D grid-stride loop: with just enough blocks each thread runs it once.
    x0, y0 = cuda.grid(2)
    sx, sy = cuda.gridsize(2)
    for i in range(x0, size, sx):
        for j in range(y0, size, sy):
            out[i, j] = a[i, j] + 10
