import math

import numba
from numba import cuda

TPB = 16


@cuda.jit
def kernel(out, a, gamma, beta, cols):
    # Thread 0 adds the row's cells and leaves the mean, then the variance, in cache[0].
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.x
    c = cuda.threadIdx.x
    x = numba.float32(0)
    if c < cols:
        x = a[row, c]
        cache[c] = x
    cuda.syncthreads()
    if c == 0:
        s = numba.float32(0)
        for k in range(cols):
            s += cache[k]
        cache[0] = s / cols
    cuda.syncthreads()
    mean = cache[0]
    cuda.syncthreads()
    d = x - mean
    if c < cols:
        cache[c] = d * d
    cuda.syncthreads()
    if c == 0:
        s = numba.float32(0)
        for k in range(cols):
            s += cache[k]
        cache[0] = s / cols
    cuda.syncthreads()
    var = cache[0]
    if c < cols:
        out[row, c] = (x - mean) / math.sqrt(var + 1e-5) * gamma[c] + beta[c]
