import numba
from numba import cuda

# Threads in a warp, and in each block here.
WARP = 32
# One bit per lane: all 32 lanes take part.
FULL_MASK = 0xffffffff


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    lane = cuda.laneid

    # Each lane keeps its value in a register. Lanes
    # past the end hold 0 but still take part in every
    # shuffle, as the full mask promises.
    total = numba.float32(0)
    if i < size:
        total = a[i]

    # Tree reduction across lanes: add the total held
    # `offset` lanes further up. After offsets 16, 8,
    # 4, 2, 1, lane 0 holds the sum of all 32 lanes.
    # (Higher lanes end with partial sums that nobody
    # needs.)
    offset = WARP // 2
    while offset > 0:
        total += cuda.shfl_down_sync(FULL_MASK, total,
                                     offset)
        offset //= 2

    # One global write per warp, by lane 0, into this
    # block's cell.
    if lane == 0:
        out[cuda.blockIdx.x] = total
