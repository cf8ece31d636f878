import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    cache[t] = a[i] * b[i] if i < size else 0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            cache[t] += cache[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[0] = cache[0]
