import numba
from numba import cuda

TPB = 256          # threads per block: 8 warps
WARP = 32          # lanes in a warp
WARPS = 8          # TPB // WARP: warps in a block
# One bit per lane: all 32 lanes take part.
FULL_MASK = 0xffffffff


@cuda.jit
def kernel(out, a, size):
    # Correct and free of divergence, but all 255
    # additions go through shared memory: 45 shared
    # requests per block.
    # FILL ME IN (about 18 lines): sum each warp with
    # shuffles, and keep shared memory for the few
    # warp totals.
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    value = numba.float32(0)
    if i < size:
        value = a[i]
    cache[t] = value
    cuda.syncthreads()

    s = TPB // 2
    while s > 0:
        if t < s:
            cache[t] += cache[t + s]
        cuda.syncthreads()
        s //= 2

    if t == 0:
        out[cuda.blockIdx.x] = cache[0]
