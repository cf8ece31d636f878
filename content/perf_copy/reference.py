from numba import cuda

TPB = 64     # threads per block: two warps
CHUNK = 4    # elements each thread copies


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    # Every thread of the grid, counted once: the
    # distance from one pass over the array to the
    # next.
    stride = cuda.gridsize(1)

    # Grid-stride loop. In each pass the grid covers
    # one contiguous stretch of the array, and lane
    # L of a warp takes the element right after lane
    # L - 1's. A warp's load is then 32 floats side
    # by side: 128 bytes, four 32-byte sectors, no
    # byte fetched for nothing. The store is the
    # same. Each thread still copies CHUNK elements
    # (fewer near the end), only in a different
    # order.
    for k in range(i, size, stride):
        out[k] = a[k]
