from numba import cuda
import numba
import math

TPB = 16


@cuda.jit
def kernel(out, a, cols):
    # One block per row, one thread per column. TPB
    # is a power of two, which the halving reductions
    # below rely on.
    row = cuda.blockIdx.x
    c = cuda.threadIdx.x
    cache = cuda.shared.array(TPB, numba.float32)

    # The only global read. Threads past the end of
    # the row hold minus infinity, which can never be
    # the maximum.
    x = -math.inf
    if c < cols:
        x = a[row, c]
    cache[c] = x
    cuda.syncthreads()

    # Reduction 1, the row maximum. Each round the
    # lower half of the active threads folds in the
    # cell one stride above; after the last round
    # cache[0] holds the max of all TPB cells.
    stride = TPB // 2
    while stride > 0:
        if c < stride:
            cache[c] = max(cache[c], cache[c + stride])
        cuda.syncthreads()
        stride //= 2
    row_max = cache[0]
    # Every thread must have read cache[0] before the
    # cells are overwritten below.
    cuda.syncthreads()

    # Shifting by the max makes the largest
    # exponential exp(0) = 1: nothing can overflow.
    # Padding threads contribute zero to the sum.
    e = 0.0
    if c < cols:
        e = math.exp(x - row_max)
    cache[c] = e
    cuda.syncthreads()

    # Reduction 2, the same tree with addition.
    stride = TPB // 2
    while stride > 0:
        if c < stride:
            cache[c] += cache[c + stride]
        cuda.syncthreads()
        stride //= 2
    total = cache[0]

    # The only global write.
    if c < cols:
        out[row, c] = e / total
