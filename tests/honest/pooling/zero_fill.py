import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    shared = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    shared[t] = a[i] if i < size else 0
    cuda.syncthreads()
    if i < size:
        left1 = shared[t - 1] if t >= 1 else 0
        left2 = shared[t - 2] if t >= 2 else 0
        out[i] = left2 + left1 + shared[t]
