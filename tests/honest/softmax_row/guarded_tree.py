import math

import numba
from numba import cuda

TPB = 16


@cuda.jit
def kernel(out, a, cols):
    # Only the row's cells are written and folded: a pair is combined only when both exist.
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.x
    c = cuda.threadIdx.x
    x = numba.float32(0)
    if c < cols:
        x = a[row, c]
        cache[c] = x
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if c < s and c + s < cols:
            cache[c] = max(cache[c], cache[c + s])
        cuda.syncthreads()
        s //= 2
    m = cache[0]
    cuda.syncthreads()
    e = numba.float32(0)
    if c < cols:
        e = math.exp(x - m)
        cache[c] = e
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if c < s and c + s < cols:
            cache[c] += cache[c + s]
        cuda.syncthreads()
        s //= 2
    if c < cols:
        out[row, c] = e / cache[0]
