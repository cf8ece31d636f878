"""layernorm, divergent: the expert kernel, plus warp 0 of row 0's block where each of the 32 lanes
runs its own loop (its own source lines and constants) of 500 dependent float64 multiply-adds,
folded into the lanes' partial sums as a term that is always 0.

Stresses: branch divergence: 32 x 500 dependent FMAs of some 8 cycles one after another. A GPU:
some 60-90 us; about as fast as the naive kernel (~100 us), far slower than the expert.
"""

import math

import numba
from numba import cuda

# Extra work: the 32 lanes of one warp each in a branch of their own, DIVERGENT_STEPS steps each.
DIVERGENT_STEPS = 500
LIMIT = 1.0e30
ITEMS = 16       # row elements each thread keeps in registers between the passes
MAX_TPB = 1024
WARPS_MAX = 32   # MAX_TPB // 32: one shared slot per warp
EPS = 1e-5


@cuda.jit(fastmath=True)
def layernorm_block_per_row(out, x, gamma, beta, cols):
    # One block per row. The row is read from memory once into registers (ITEMS per thread, all
    # loads independent, so many are in flight). The mean, then the variance as the mean of
    # (x - mean)^2 (two passes over registers: exact, no cancellation), are reduced with warp
    # shuffles plus one shared slot per warp; the output is written from the registers. Rows
    # longer than ITEMS x threads read their remainder again from memory.
    red = cuda.shared.array(WARPS_MAX, numba.float32)
    xr = cuda.local.array(ITEMS, numba.float32)
    r = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    held = ITEMS * nt
    s = numba.float32(0)
    for t in range(ITEMS):
        c = tid + t * nt
        v = numba.float32(0)
        if c < cols:
            v = x[r, c]
        xr[t] = v
    for t in range(ITEMS):
        s += xr[t]
    c = held + tid
    while c < cols:
        s += x[r, c]
        c += nt
    inv_n = numba.float32(1) / numba.float32(cols)
    mean = _block_sum(s, red, tid, nt) * inv_n
    s2 = numba.float32(0)
    for t in range(ITEMS):
        dv = numba.float32(0)  # padding slots (past the row) add nothing
        if tid + t * nt < cols:
            dv = xr[t] - mean
        s2 += dv * dv
    c = held + tid
    while c < cols:
        dv = x[r, c] - mean
        s2 += dv * dv
        c += nt
    if r == 0 and tid < 32:  # extra work: 32 lanes, 32 branches, folded in as an exact 0
        s2 += _divergent_lanes(tid, x[r, 0])
    var = _block_sum(s2, red, tid, nt) * inv_n
    rstd = numba.float32(1) / math.sqrt(var + numba.float32(EPS))
    for t in range(ITEMS):
        c = tid + t * nt
        if c < cols:
            out[r, c] = (xr[t] - mean) * rstd * gamma[c] + beta[c]
    c = held + tid
    while c < cols:
        out[r, c] = (x[r, c] - mean) * rstd * gamma[c] + beta[c]
        c += nt


@cuda.jit(device=True)
def _block_sum(v, red, tid, nt):
    # Sum over the block: shuffles within each warp, then every thread reads the warps' slots.
    for off in (16, 8, 4, 2, 1):
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, off)
    cuda.syncthreads()  # the slots may still be read from a previous reduction
    if tid % 32 == 0:
        red[tid // 32] = v
    cuda.syncthreads()
    v = red[0]
    for w in range(1, (nt + 31) // 32):
        v += red[w]
    return v


def launch(out, x, gamma, beta):
    rows = x.shape[0]
    cols = x.shape[1]
    # Enough threads that each holds at most ITEMS elements, whole warps, at most MAX_TPB.
    tpb = 32
    while tpb < MAX_TPB and tpb * ITEMS < cols:
        tpb *= 2
    layernorm_block_per_row[rows, tpb](out, x, gamma, beta, cols)


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
