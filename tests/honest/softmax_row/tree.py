import math

import numba
from numba import cuda

TPB = 16


@cuda.jit
def kernel(out, a, cols):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.x
    c = cuda.threadIdx.x
    x = -math.inf
    if c < cols:
        x = a[row, c]
    cache[c] = x
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if c < s:
            cache[c] = max(cache[c], cache[c + s])
        cuda.syncthreads()
        s //= 2
    m = cache[0]
    cuda.syncthreads()
    e = math.exp(x - m) if c < cols else 0.0
    cache[c] = e
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if c < s:
            cache[c] += cache[c + s]
        cuda.syncthreads()
        s //= 2
    total = cache[0]
    if c < cols:
        out[row, c] = e / total
