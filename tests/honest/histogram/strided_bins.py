import numba
from numba import cuda

BINS = 8
TPB = 16


@cuda.jit
def kernel(out, a, size):
    # Written for any BINS: the block's threads stride over the bins.
    hist = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    for b in range(t, BINS, cuda.blockDim.x):
        hist[b] = 0
    cuda.syncthreads()
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    if i < size:
        cuda.atomic.add(hist, a[i], 1)
    cuda.syncthreads()
    for b in range(t, BINS, cuda.blockDim.x):
        cuda.atomic.add(out, b, hist[b])
