import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    col = cuda.threadIdx.x
    cache[col] = a[row, col] if col < size else 0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if col < stride:
            cache[col] += cache[col + stride]
        cuda.syncthreads()
        stride //= 2
    if col == 0:
        out[row, 0] = cache[0]
