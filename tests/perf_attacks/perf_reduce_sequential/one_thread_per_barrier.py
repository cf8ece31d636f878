"""A chain, not a tree: 255 barrier steps, and in step s only thread s works (it adds its
neighbour's running sum into its own cell). Each thread runs the line once, in its own step; a
count that groups each lane's first run of a line into one request sees 32 lanes per request,
where every step is a request of one lane on the GPU."""

import numba
from numba import cuda

TPB = 256


@cuda.jit
def kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    value = numba.float32(0)
    if i < size:
        value = a[i]
    cache[t] = value
    cuda.syncthreads()
    for s in range(1, TPB):
        if t == s:
            cache[t] += cache[t - 1]
        cuda.syncthreads()
    if t == TPB - 1:
        out[cuda.blockIdx.x] = cache[TPB - 1]
