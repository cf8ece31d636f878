from numba import cuda

TPB = 64
CHUNK = 4


@cuda.jit
def kernel(out, a, size):
    start = cuda.blockIdx.x * cuda.blockDim.x * CHUNK
    end = min(start + cuda.blockDim.x * CHUNK, size)
    for k in range(start + cuda.threadIdx.x, end, cuda.blockDim.x):
        out[k] = a[k]
