import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    shared = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if i < size:
        shared[t] = a[i]
    else:
        shared[t] = 0
    cuda.syncthreads()
    if i < size:
        total = numba.float32(0)
        for k in range(max(0, t - 2), t + 1):
            total += shared[k]
        out[i] = total
