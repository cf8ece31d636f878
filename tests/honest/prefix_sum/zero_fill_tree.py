import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    cache[t] = a[i] if i < size else 0
    cuda.syncthreads()
    p = 1
    while p < TPB:
        if t % (2 * p) == 0:
            cache[t] += cache[t + p]
        cuda.syncthreads()
        p *= 2
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]
