"""No tree: a chain down each warp, one lane per step with a syncwarp between steps (31 steps of
one working lane), then a chain down the 8 warp totals, one barrier each, and five full-warp reads
that do nothing to lift the mean. On a GPU the chain is 93 one-lane shared instructions per warp;
while requests ignored the warp phase, each lane ran the line once, so its 31 steps were counted as
one conflict-free request of 31 lanes."""

import numba
from numba import cuda

TPB = 256
WARP = 32


@cuda.jit
def kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    lane = t % WARP
    value = numba.float32(0)
    if i < size:
        value = a[i]
    cache[t] = value
    cuda.syncwarp()
    # a chain down each warp: one lane per step, 31 steps
    for step in range(WARP - 1):
        if lane == WARP - 1 - step:
            cache[t - 1] += cache[t]
        cuda.syncwarp()
    cuda.syncthreads()
    # then down the warps' totals, one barrier per warp
    for w in range(TPB // WARP - 1, 0, -1):
        if t == w * WARP:
            cache[t - WARP] += cache[t]
        cuda.syncthreads()
    # full-warp reads that do nothing
    dummy = numba.float32(0)
    if t < WARP:
        for r in range(5):
            dummy += cache[t]
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]
