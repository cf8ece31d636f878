"""Finding (issue "Scores and hints that mean what they say"): layernorm scored 68x over the naive
kernel while thread 0 of every row's block ran a chain of 64-bit multiplies and modulos by a
divisor known only at run time. Reproduced: the expert kernel, plus r = (r * 48271 + 11) % d,
100,000 times in thread 0 of each row's block, d = 2,000,000,000 + cols, folded into the row's sum
of squared deviations as a term that is always 0.

Stresses: a dependent chain of 64-bit remainders by a run-time divisor (a software routine of
tens of instructions each; the dividend passes 32 bits, so no 32-bit shortcut). Today's model:
the expert's 68x. A GPU: some hundreds of cycles a step, some 10-20 ms: a hundred times slower
than the naive kernel or more.
"""

import math

import numba
from numba import cuda

# Extra work: MULMOD_STEPS dependent int64 multiply-modulos by a run-time divisor in one thread.
MULMOD_STEPS = 100_000
DIVISOR_BASE = 2000000000
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
    if tid == 0:  # extra work: a chain of multiply-modulos, folded in as an exact 0
        s2 += _mulmod_chain(x[r, 0], DIVISOR_BASE + cols, MULMOD_STEPS)
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
def _mulmod_chain(seed, divisor, steps):
    # `steps` 64-bit multiplies, each followed by a modulo by `divisor`, a number the kernel only
    # learns at run time (so no multiply-by-inverse trick: a full 64-bit remainder each time).
    # Every value stays below the divisor (< 2**31, so products fit in 63 bits): the flag is 0.
    r = numba.int64(abs(seed) * 1024.0) % divisor
    for _ in range(steps):
        r = (r * 48271 + 11) % divisor
    return numba.float32(r >= divisor)
