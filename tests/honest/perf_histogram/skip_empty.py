import numba
from numba import cuda

BINS = 32
TPB = 256


@cuda.jit
def kernel(out, a, size):
    # Only the bins this block counted are merged.
    local = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    if i < size:
        cuda.atomic.add(local, a[i], 1)
    cuda.syncthreads()
    if t < BINS:
        c = local[t]
        if c != 0:
            cuda.atomic.add(out, t, c)
