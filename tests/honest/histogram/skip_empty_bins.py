import numba
from numba import cuda

BINS = 8
TPB = 16


@cuda.jit
def kernel(out, a, size):
    # Thread 0 clears the bins; only bins this block counted are merged.
    hist = cuda.shared.array(BINS, numba.int32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if t == 0:
        for b in range(BINS):
            hist[b] = 0
    cuda.syncthreads()
    if i < size:
        v = a[i]
        cuda.atomic.add(hist, v, 1)
    cuda.syncthreads()
    if t < BINS:
        count = hist[t]
        if count > 0:
            cuda.atomic.add(out, t, count)
