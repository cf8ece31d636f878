import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if i < size:
        cache[t] = a[i] * b[i]
    else:
        cache[t] = 0
    cuda.syncthreads()
    if t == 0:
        total = numba.float32(0)
        for k in range(TPB):
            total += cache[k]
        out[0] = total
