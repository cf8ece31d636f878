import numba
from numba import cuda

TPB = 16


@cuda.jit
def kernel(out, a, size):
    # Only cells below size are loaded and updated; the barriers stay outside the ifs.
    temp = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        temp[i] = a[i]
    cuda.syncthreads()
    d = 1
    while d < size:
        v = numba.float32(0)
        if i < size and i >= d:
            v = temp[i - d]
        cuda.syncthreads()
        if i < size and i >= d:
            temp[i] += v
        cuda.syncthreads()
        d *= 2
    if i < size:
        out[i] = temp[i]
