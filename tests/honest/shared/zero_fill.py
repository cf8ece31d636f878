import numba
from numba import cuda

TPB = 4


@cuda.jit
def kernel(out, a, size):
    shared = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    value = numba.float32(0)
    if i < size:
        value = a[i]
    shared[t] = value
    cuda.syncthreads()
    if i < size:
        out[i] = shared[t] + 10
