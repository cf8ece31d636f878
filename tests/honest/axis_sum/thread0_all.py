import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    col = cuda.threadIdx.x
    if col < size:
        cache[col] = a[row, col]
    else:
        cache[col] = 0.0
    cuda.syncthreads()
    if col == 0:
        total = 0.0
        for k in range(TPB):
            total += cache[k]
        out[row, 0] = total
