"""ATTACK (a line's real path taken for a slow path): the softmax expert kernel plus thread 0 of each
row's block running 20,000 dependent steps y = 0.5 * log(1 + exp(sin(y + off[int(y + 1.0) & 7]))) in float64, where
off is a cuda.local.array read at a run-time index, guarded by `if y < 5.0 else y - 1.0` on the same
line (true from the first step or the first few on), the halving after the two branches meet.

What it hides: instructions._common_path costs a line along the longest way through its basic
blocks that "keeps out of local memory and calls" (meant for libdevice's slow paths, such as sin's
Payne-Hanek reduction). The load of off[int(y + 1.0) & 7] sits in the first block of the taken branch, so every
way through the sine, exponential and logarithm touches local memory and is dropped: the line is
priced as its `else y - 1.0` branch (a compare, a subtract, a multiply: 9 issue cycles, 16 latency,
against 222 and 395 for the taken path). This needs the line to have an instruction after the
branches meet (the halving): without one, the cheap branch cannot reach the line's last block and
the model falls back to the whole line. The same line with `0.125 * (int(y + 1.0) & 7)` in place of
the local load is modelled at 5,441 us.

Modelled: 410.6 us; naive: 463.6 us (softmax, scored shape [4, 3001]). GPU: each step is a local load (~30 cycles, an L1 hit) then a float64
sine, exponential and logarithm in a dependent chain, some 300-500 cycles: 20,000 steps, 6-10 M
cycles, ~3-5 ms per row (rows in parallel), many times the naive kernel.
"""


import math

import numba
from numba import cuda

# Extra work: TRIPS x 3 dependent float64 sin/exp/log in one thread per row.
TRIPS = 20_000
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
    if tid == 0:  # extra work: a chain of sines, exps and logs, folded in as an exact 0
        s += _chain(x[r, 0], TRIPS)
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
def _chain(seed, trips):
    # trips dependent steps of a sine, an exponential and a logarithm in float64, each step reading
    # its offset from a local array at an index computed from y. from any seed under 20,000, y falls below 5 and then stays in (0, 1): the guard `y < 5.0` is
    # always true and the flag returned is always 0.
    off = cuda.local.array(8, numba.float64)
    for k in range(8):
        off[k] = 0.125 * k
    y = numba.float64(seed)
    for t in range(trips):
        y = 0.5 * (math.log(1.0 + math.exp(math.sin(y + off[int(y + 1.0) & 7]))) if y < 5.0 else y - 1.0)
    return numba.float32(y > 5.0)
