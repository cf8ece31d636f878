import numba
from numba import cuda

TPB = 256


@cuda.jit
def kernel(out, a, size):
    # The eight levels as a for loop.
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    v = numba.float32(0)
    if i < size:
        v = a[i]
    cache[t] = v
    cuda.syncthreads()
    for level in range(1, 9):
        s = TPB >> level
        if t < s:
            cache[t] = cache[t] + cache[t + s]
        cuda.syncthreads()
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]
