import numba
from numba import cuda

TPB = 256


@cuda.jit
def kernel(out, a, size):
    sdata = cuda.shared.array(TPB, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    sdata[tid] = a[i] if i < size else 0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s >>= 1
    if tid == 0:
        out[cuda.blockIdx.x] = sdata[0]
