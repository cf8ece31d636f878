import numba
from numba import cuda

BINS = 32   # values are in [0, BINS): one warp of bins
TPB = 256   # threads per block: 8 warps


@cuda.jit
def kernel(out, a, size):
    # The block's private histogram, on chip. Its
    # atomics are cheap, and only this block's 256
    # threads contend for them.
    block_hist = cuda.shared.array(BINS, numba.int32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x

    # Shared memory starts with garbage: warp 0
    # clears the BINS cells, one lane each.
    if t < BINS:
        block_hist[t] = 0
    cuda.syncthreads()

    # Count. Lanes with the same value still collide,
    # but in shared memory, not in `out`.
    if i < size:
        cuda.atomic.add(block_hist, a[i], 1)
    cuda.syncthreads()

    # Merge: warp 0 adds the block's BINS counts into
    # `out`, lane t into bin t. One global request of
    # 32 different addresses per block: BINS atomics
    # in all, and no two lanes on one address.
    if t < BINS:
        cuda.atomic.add(out, t, block_hist[t])
