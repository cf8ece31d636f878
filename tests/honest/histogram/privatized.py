import numba
from numba import cuda

BINS = 8
TPB = 16


@cuda.jit
def kernel(out, a, size):
    hist = cuda.shared.array(BINS, numba.int32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if t < BINS:
        hist[t] = 0
    cuda.syncthreads()
    if i < size:
        cuda.atomic.add(hist, a[i], 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(out, t, hist[t])
