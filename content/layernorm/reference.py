from numba import cuda
import numba
import math

TPB = 16


@cuda.jit(device=True)
def block_sum(cache, c):
    # Halving tree over the TPB cells of `cache`; the
    # caller has filled every cell and passed a
    # barrier. It contains barriers, so every thread
    # of the block must call it.
    stride = TPB // 2
    while stride > 0:
        if c < stride:
            cache[c] += cache[c + stride]
        cuda.syncthreads()
        stride //= 2
    return cache[0]


@cuda.jit
def kernel(out, a, gamma, beta, cols):
    row = cuda.blockIdx.x
    c = cuda.threadIdx.x
    cache = cuda.shared.array(TPB, numba.float32)

    # Pass 1: the mean. Padding threads add zero; the
    # divisor is the real row length.
    x = 0.0
    if c < cols:
        x = a[row, c]
    cache[c] = x
    cuda.syncthreads()
    mean = block_sum(cache, c) / cols
    # All threads must have read cache[0] before the
    # cells are reused.
    cuda.syncthreads()

    # Pass 2: the variance, as the mean of squared
    # deviations. Summing deviations from the mean
    # (rather than mean(x*x) - mean*mean) avoids
    # cancelling two large, nearly equal numbers.
    d = 0.0
    if c < cols:
        d = x - mean
    cache[c] = d * d
    cuda.syncthreads()
    var = block_sum(cache, c) / cols

    # Normalise, then scale and shift per column.
    # 1e-5 is the epsilon, written as a literal
    # because module constants must be integers.
    if c < cols:
        out[row, c] = (d / math.sqrt(var + 1e-5)
                       * gamma[c] + beta[c])
