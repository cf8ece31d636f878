import numba
from numba import cuda

TPB = 16


@cuda.jit
def kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    cache[i] = a[i] if i < size else 0
    cuda.syncthreads()
    offset = 1
    while offset < TPB:
        add = numba.float32(0)
        if i >= offset:
            add = cache[i - offset]
        cuda.syncthreads()
        cache[i] += add
        cuda.syncthreads()
        offset *= 2
    if i < size:
        out[i] = cache[i]
