import numba
from numba import cuda

TPB = 256


@cuda.jit
def kernel(out, a, size):
    # Each working thread keeps its running sum in a register: one shared load and one store per
    # step instead of two loads.
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    total = numba.float32(0)
    if i < size:
        total = a[i]
    cache[t] = total
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if t < s:
            total += cache[t + s]
            cache[t] = total
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = total
