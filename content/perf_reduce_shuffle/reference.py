import numba
from numba import cuda

TPB = 256          # threads per block: 8 warps
WARP = 32          # lanes in a warp
WARPS = 8          # TPB // WARP: warps in a block
# One bit per lane: all 32 lanes take part.
FULL_MASK = 0xffffffff


@cuda.jit
def kernel(out, a, size):
    # One shared cell per warp, not per thread: only
    # the warp totals meet in shared memory.
    warp_sums = cuda.shared.array(WARPS, numba.float32)
    i = cuda.grid(1)
    lane = cuda.laneid
    warp = cuda.threadIdx.x // WARP

    total = numba.float32(0)
    if i < size:
        total = a[i]

    # Stage 1, in registers: each warp sums its 32
    # values with shuffles. No shared memory, no
    # barrier; lane 0 ends with the warp's total.
    offset = WARP // 2
    while offset > 0:
        total += cuda.shfl_down_sync(FULL_MASK, total,
                                     offset)
        offset //= 2

    # One shared store per warp (one lane works in
    # it), then a barrier: warp 0 is about to read
    # the other warps' totals.
    if lane == 0:
        warp_sums[warp] = total
    cuda.syncthreads()

    # Stage 2: warp 0 loads the WARPS totals in one
    # request and shuffles them together. All 32 of
    # its lanes are in the branch, so the full mask
    # holds; lanes past WARPS bring 0.
    if warp == 0:
        total = numba.float32(0)
        if lane < WARPS:
            total = warp_sums[lane]
        offset = WARPS // 2
        while offset > 0:
            total += cuda.shfl_down_sync(FULL_MASK,
                                         total, offset)
            offset //= 2
        if lane == 0:
            out[cuda.blockIdx.x] = total
