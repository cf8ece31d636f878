import numba
from numba import cuda

TPB = 256          # threads per block (power of two for the tree)
UNROLL = 4         # independent accumulators per thread
MAX_BLOCKS = 1056  # 132 SMs x 8 resident blocks of 256 threads on an H100/H200


@cuda.jit
def zero(out):
    # out arrives with garbage in it (the verifier poisons it with NaN): start the total at 0.
    if cuda.grid(1) == 0:
        out[0] = 0.0


@cuda.jit
def block_sums(out, x, n):
    # Each block adds the sum of its grid-stride share of x into out[0]: one atomic per block,
    # no scratch to allocate, no second pass.
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
        cuda.atomic.add(out, 0, cache[0])


def launch(out, x):
    n = x.shape[0]
    blocks = min(MAX_BLOCKS, max(1, (n + TPB * UNROLL - 1) // (TPB * UNROLL)))
    zero[1, 32](out)
    block_sums[blocks, TPB](out, x, n)
