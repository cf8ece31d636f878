import numba
import numpy
from numba import cuda

TPB = 256          # threads per block (power of two for the tree)
UNROLL = 4         # independent accumulators per thread
MAX_BLOCKS = 1056  # 132 SMs x 8 resident blocks of 256 threads on an H100/H200


@cuda.jit
def block_sums(partials, x, n):
    # Each block writes the sum of its grid-stride share of x to partials[blockIdx.x].
    cache = cuda.shared.array(TPB, numba.float32)
    tid = cuda.threadIdx.x
    stride = cuda.gridDim.x * TPB
    i = cuda.blockIdx.x * TPB + tid
    a0 = numba.float32(0)
    a1 = numba.float32(0)
    a2 = numba.float32(0)
    a3 = numba.float32(0)
    while i + 3 * stride < n:
        a0 += x[i]
        a1 += x[i + stride]
        a2 += x[i + 2 * stride]
        a3 += x[i + 3 * stride]
        i += 4 * stride
    while i < n:
        a0 += x[i]
        i += stride
    cache[tid] = (a0 + a1) + (a2 + a3)
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if tid < s:
            cache[tid] += cache[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partials[cuda.blockIdx.x] = cache[0]


def launch(out, x):
    n = x.shape[0]
    blocks = min(MAX_BLOCKS, max(1, (n + TPB * UNROLL - 1) // (TPB * UNROLL)))
    if blocks == 1:
        block_sums[1, TPB](out, x, n)
    else:
        partials = cuda.device_array((blocks,), numpy.float32)
        block_sums[blocks, TPB](partials, x, n)
        block_sums[1, TPB](out, partials, blocks)
