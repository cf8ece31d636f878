import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    # Sequential addressing over the row's own cells: a pair is added only when both exist.
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    col = cuda.threadIdx.x
    if col < size:
        cache[col] = a[row, col]
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if col < stride and col + stride < size:
            cache[col] += cache[col + stride]
        cuda.syncthreads()
        stride //= 2
    if col == 0:
        out[row, 0] = cache[0]
