import numba
from numba import cuda

BINS = 32
TPB = 256


@cuda.jit
def kernel(out, a, size):
    # The block's last warp clears and merges, lane k with bin k.
    counts = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    k = t - (TPB - BINS)
    if k >= 0:
        counts[k] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < size:
        cuda.atomic.add(counts, a[i], 1)
    cuda.syncthreads()
    if k >= 0:
        cuda.atomic.add(out, k, counts[k])
