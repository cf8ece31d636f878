from numba import cuda


@cuda.jit
def kernel(out, a, size):
    # Global position in the whole 2D grid, x first.
    # Row (first index):
    #   i = blockIdx.x * blockDim.x + threadIdx.x
    # Column (second index):
    #   j = blockIdx.y * blockDim.y + threadIdx.y
    i, j = cuda.grid(2)
    # Blocks on the bottom and right edges may stick
    # out of the array.
    if i < size and j < size:
        out[i, j] = a[i, j] + 10
