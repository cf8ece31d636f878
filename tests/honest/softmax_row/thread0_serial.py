import math

import numba
from numba import cuda

TPB = 16


@cuda.jit
def kernel(out, a, cols):
    # Thread 0 finds the max and the sum over the row's cells and leaves each in cache[0].
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.x
    c = cuda.threadIdx.x
    x = numba.float32(0)
    if c < cols:
        x = a[row, c]
        cache[c] = x
    cuda.syncthreads()
    if c == 0:
        m = cache[0]
        for k in range(1, cols):
            m = max(m, cache[k])
        cache[0] = m
    cuda.syncthreads()
    m = cache[0]
    cuda.syncthreads()
    e = numba.float32(0)
    if c < cols:
        e = math.exp(x - m)
        cache[c] = e
    cuda.syncthreads()
    if c == 0:
        total = numba.float32(0)
        for k in range(cols):
            total += cache[k]
        cache[0] = total
    cuda.syncthreads()
    if c < cols:
        out[row, c] = e / cache[0]
