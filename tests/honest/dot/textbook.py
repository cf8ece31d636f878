import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i] = a[i] * b[i]
    cuda.syncthreads()
    if local_i == 0:
        total = 0.0
        for k in range(size):
            total += cache[k]
        out[0] = total
