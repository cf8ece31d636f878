import numba
from numba import cuda

TPB = 256


@cuda.jit
def kernel(out, a, size):
    # Sequential addressing over the block's own values only: the last block, partly empty,
    # adds a pair only when both halves hold a value.
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = min(TPB, size - cuda.blockIdx.x * TPB)
    if t < n:
        cache[t] = a[i]
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if t < s and t + s < n:
            cache[t] += cache[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]
