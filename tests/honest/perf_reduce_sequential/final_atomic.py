import numba
from numba import cuda

TPB = 256


@cuda.jit
def kernel(out, a, size):
    # The tree, then thread 0 adds the block's total with one atomic (out starts at zero).
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < size:
        cache[t] = a[i]
    else:
        cache[t] = 0
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if t < s:
            cache[t] += cache[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(out, cuda.blockIdx.x, cache[0])
