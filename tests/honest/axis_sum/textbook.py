import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    batch = cuda.blockIdx.y
    if i < size:
        cache[local_i] = a[batch, i]
    cuda.syncthreads()
    p = 1
    while p < TPB:
        if local_i % (2 * p) == 0 and i + p < size:
            cache[local_i] += cache[local_i + p]
        cuda.syncthreads()
        p *= 2
    if local_i == 0:
        out[batch, 0] = cache[0]
