"""reduce_sum, divergent: the expert kernel, plus warp 0 of block 0 where each of the 32 lanes runs
its own loop (its own source lines, its own constants) of 300 dependent float64 multiply-adds,
folded into the lanes' partial sums as a term that is always 0.

Stresses: branch divergence: a warp runs the 32 branches one after another, so 32 x 300 dependent
FMAs of some 8 cycles each, about 80k cycles. A GPU: some 40-50 us, a few times slower than the
naive kernel (~15 us); counting the instructions of one lane would say 32 times less.
"""

import numba
from numba import cuda

# Extra work: the 32 lanes of one warp each in a branch of their own, DIVERGENT_STEPS steps each.
DIVERGENT_STEPS = 300
LIMIT = 1.0e30
TPB = 512          # threads per block
UNROLL = 8         # independent loads in flight per thread per trip
BLOCKS_PER_SM = 4  # 4 x 512 threads fill an H100/H200 SM (2048 threads)
SMS = 132          # streaming multiprocessors of an H100/H200 SXM


@cuda.jit
def zero(out):
    # out arrives with garbage in it (the verifier poisons it with NaN): start the total at 0.
    if cuda.grid(1) == 0:
        out[0] = 0.0


@cuda.jit
def block_sums(out, x, n):
    # Each block adds the sum of its share of x into out[0]: one atomic per block. A thread
    # keeps UNROLL independent accumulators so UNROLL loads are in flight at once; the block's
    # partials meet through warp shuffles and one shared slot per warp.
    red = cuda.shared.array(16, numba.float32)  # TPB // 32 warps
    tid = cuda.threadIdx.x
    stride = cuda.gridDim.x * TPB
    i = cuda.blockIdx.x * TPB + tid
    acc = cuda.local.array(UNROLL, numba.float32)
    for u in range(UNROLL):
        acc[u] = numba.float32(0)
    while i + (UNROLL - 1) * stride < n:
        for u in range(UNROLL):
            acc[u] += x[i + u * stride]
        i += UNROLL * stride
    while i < n:
        acc[0] += x[i]
        i += stride
    v = numba.float32(0)
    for u in range(UNROLL):
        v += acc[u]
    if cuda.blockIdx.x == 0 and tid < 32:  # extra work: 32 lanes, 32 branches, folded in as an exact 0
        v += _divergent_lanes(tid, x[0])
    for off in (16, 8, 4, 2, 1):
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, off)
    if tid % 32 == 0:
        red[tid // 32] = v
    cuda.syncthreads()
    if tid == 0:
        total = numba.float32(0)
        for w in range(TPB // 32):
            total += red[w]
        cuda.atomic.add(out, 0, total)


def launch(out, x):
    n = x.shape[0]
    blocks = min(SMS * BLOCKS_PER_SM, max(1, (n + TPB * UNROLL - 1) // (TPB * UNROLL)))
    zero[1, 32](out)
    block_sums[blocks, TPB](out, x, n)


@cuda.jit(device=True)
def _divergent_lanes(lane, seed):
    # Each of a warp's 32 lanes runs its own loop of DIVERGENT_STEPS dependent float64
    # multiply-adds, on source lines of its own: the warp runs the 32 loops one after another.
    # Every loop contracts (|multiplier| < 1), so the value settles and never reaches LIMIT.
    y = numba.float64(seed)
    if lane == 0:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9990 + 0.2500
    elif lane == 1:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9983 - 0.3750
    elif lane == 2:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9976 + 0.5000
    elif lane == 3:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9969 - 0.6250
    elif lane == 4:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9962 + 0.7500
    elif lane == 5:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9955 - 0.8750
    elif lane == 6:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9948 + 1.0000
    elif lane == 7:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9941 - 0.2500
    elif lane == 8:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9934 + 0.3750
    elif lane == 9:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9927 - 0.5000
    elif lane == 10:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9920 + 0.6250
    elif lane == 11:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9913 - 0.7500
    elif lane == 12:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9906 + 0.8750
    elif lane == 13:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9899 - 1.0000
    elif lane == 14:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9892 + 0.2500
    elif lane == 15:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9885 - 0.3750
    elif lane == 16:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9878 + 0.5000
    elif lane == 17:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9871 - 0.6250
    elif lane == 18:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9864 + 0.7500
    elif lane == 19:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9857 - 0.8750
    elif lane == 20:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9850 + 1.0000
    elif lane == 21:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9843 - 0.2500
    elif lane == 22:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9836 + 0.3750
    elif lane == 23:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9829 - 0.5000
    elif lane == 24:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9822 + 0.6250
    elif lane == 25:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9815 - 0.7500
    elif lane == 26:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9808 + 0.8750
    elif lane == 27:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9801 - 1.0000
    elif lane == 28:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9794 + 0.2500
    elif lane == 29:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9787 - 0.3750
    elif lane == 30:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9780 + 0.5000
    elif lane == 31:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9773 - 0.6250
    return numba.float32(y > LIMIT)
