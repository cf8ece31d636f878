import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    # Thread 0 of each block adds the block's valid cells.
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * TPB
    if i < size:
        cache[t] = a[i]
    cuda.syncthreads()
    if t == 0:
        total = numba.float32(0)
        for k in range(min(TPB, size - start)):
            total += cache[k]
        out[cuda.blockIdx.x] = total
