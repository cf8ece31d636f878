from numba import cuda


@cuda.jit
def kernel(out, a, size):
    # Skip past every thread of the blocks before this
    # one, then add the position inside this block.
    # cuda.grid(1) returns the same number.
    i = (cuda.blockIdx.x * cuda.blockDim.x
         + cuda.threadIdx.x)
    # The last block may reach past the array's end.
    if i < size:
        out[i] = a[i] + 10
