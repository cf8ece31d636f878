import numba
from numba import cuda

BINS = 32
TPB = 256


@cuda.jit
def kernel(out, a, size):
    local = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    if i < size:
        cuda.atomic.add(local, a[i], 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(out, t, local[t])
