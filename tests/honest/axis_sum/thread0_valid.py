import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    # Thread 0 of the row's block adds the valid cells.
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    col = cuda.threadIdx.x
    if col < size:
        cache[col] = a[row, col]
    cuda.syncthreads()
    if col == 0:
        total = numba.float32(0)
        for k in range(size):
            total += cache[k]
        out[row, 0] = total
