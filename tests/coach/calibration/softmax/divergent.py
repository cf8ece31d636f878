"""softmax, divergent: the expert kernel, plus warp 0 of row 0's block where each of the 32 lanes
runs its own loop (its own source lines and constants) of 2,000 dependent float64 multiply-adds,
folded into the lanes' partial sums as a term that is always 0.

Stresses: branch divergence: the warp runs the 32 loops one after another, 64,000 dependent FMAs
of some 8 cycles each. A GPU: some 250-350 us, slower than the naive kernel (~100-200 us).
"""

import math

import numba
from numba import cuda

# Extra work: the 32 lanes of one warp each in a branch of their own, DIVERGENT_STEPS steps each.
DIVERGENT_STEPS = 2000
LIMIT = 1.0e30
ITEMS = 16            # row elements each thread keeps in registers between the passes
MAX_TPB = 1024
WARPS_MAX = 32        # MAX_TPB // 32: one shared slot per warp
NEG_BIG = -3.0e38     # finite stand-in for -inf


@cuda.jit(fastmath=True)
def softmax_block_per_row(out, x, cols):
    # One block per row. The row is read from memory once into registers (ITEMS per thread,
    # all loads independent, so many are in flight); the max and then the sum of exp(x - max)
    # are reduced with warp shuffles plus one shared slot per warp; the output is written from
    # the registers. Rows longer than ITEMS x threads read their remainder again from memory.
    red = cuda.shared.array(WARPS_MAX, numba.float32)
    xr = cuda.local.array(ITEMS, numba.float32)
    r = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    held = ITEMS * nt
    m = numba.float32(NEG_BIG)
    for t in range(ITEMS):
        c = tid + t * nt
        v = numba.float32(NEG_BIG)
        if c < cols:
            v = x[r, c]
        xr[t] = v
    for t in range(ITEMS):
        m = max(m, xr[t])
    c = held + tid
    while c < cols:
        m = max(m, x[r, c])
        c += nt
    m = _block_max(m, red, tid, nt)
    s = numba.float32(0)
    for t in range(ITEMS):
        e = numba.float32(0)  # padding slots (past the row) weigh nothing
        if tid + t * nt < cols:
            e = math.exp(xr[t] - m)
        xr[t] = e
        s += e
    c = held + tid
    while c < cols:
        s += math.exp(x[r, c] - m)
        c += nt
    if r == 0 and tid < 32:  # extra work: 32 lanes, 32 branches, folded in as an exact 0
        s += _divergent_lanes(tid, x[r, 0])
    inv = numba.float32(1) / _block_sum(s, red, tid, nt)
    for t in range(ITEMS):
        c = tid + t * nt
        if c < cols:
            out[r, c] = xr[t] * inv
    c = held + tid
    while c < cols:
        out[r, c] = math.exp(x[r, c] - m) * inv
        c += nt


@cuda.jit(device=True)
def _block_max(v, red, tid, nt):
    # Max over the block: shuffles within each warp, then every thread reads the warps' slots.
    for off in (16, 8, 4, 2, 1):
        v = max(v, cuda.shfl_xor_sync(0xFFFFFFFF, v, off))
    cuda.syncthreads()  # the slots may still be read from a previous reduction
    if tid % 32 == 0:
        red[tid // 32] = v
    cuda.syncthreads()
    v = red[0]
    for w in range(1, (nt + 31) // 32):
        v = max(v, red[w])
    return v


@cuda.jit(device=True)
def _block_sum(v, red, tid, nt):
    # Sum over the block, as _block_max.
    for off in (16, 8, 4, 2, 1):
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, off)
    cuda.syncthreads()
    if tid % 32 == 0:
        red[tid // 32] = v
    cuda.syncthreads()
    v = red[0]
    for w in range(1, (nt + 31) // 32):
        v += red[w]
    return v


def launch(out, x):
    rows = x.shape[0]
    cols = x.shape[1]
    # Enough threads that each holds at most ITEMS elements, whole warps, at most MAX_TPB.
    tpb = 32
    while tpb < MAX_TPB and tpb * ITEMS < cols:
        tpb *= 2
    softmax_block_per_row[rows, tpb](out, x, cols)


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
