import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    # Sequential addressing; only cells that hold an element are added.
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    n = min(TPB, size - cuda.blockIdx.x * TPB)
    if t < n:
        cache[t] = a[i]
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride and t + stride < n:
            cache[t] += cache[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]
