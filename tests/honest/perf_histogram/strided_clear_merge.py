import numba
from numba import cuda

BINS = 32
TPB = 256


@cuda.jit
def kernel(out, a, size):
    # Clearing and merging written for any block size: thread t takes bins t, t + blockDim, ...
    counts = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    for b in range(t, BINS, cuda.blockDim.x):
        counts[b] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < size:
        cuda.atomic.add(counts, a[i], 1)
    cuda.syncthreads()
    for b in range(t, BINS, cuda.blockDim.x):
        cuda.atomic.add(out, b, counts[b])
