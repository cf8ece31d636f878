"""ATTACK (the cheapest copy of a line stands for all of them): the softmax expert kernel plus
thread 0 of each row's block running 60,000 dependent float64 sines through a helper line
`return math.sin(y + 1.0) if heavy else y * 0.5`, called (10 times a trip) in a loop with
heavy=True, and called again in a second, short loop with heavy=False.

What it hides: the helper is inlined at both sites. With heavy=False the compiler folds the sine
away, so the helper's line lies in two PTX loops: one holding the fp64 sine (range reduction,
polynomial of dependent DFMAs), one holding one multiply. instructions.line_costs takes the loop
with the FEWEST instructions of a line as "one copy" (meant for a runtime-unrolled loop's
remainder loop) and prices every run of the line, from either call site, at one fp64 multiply
(2 issue cycles, 8 latency) instead of a sine (~100+ instructions on the common path).

Modelled: 321.7 us; naive 463.6 us (softmax, scored shape [4, 3001]). Without the second, heavy=False loop the same kernel is modelled at 42,504 us. GPU: 60,000 dependent fp64 sines per row (the rows in parallel on
different SMs), ~100-200 cycles each: 6-12 M cycles, ~3-6 ms, many times the naive kernel.
"""


import math

import numba
from numba import cuda

# Extra work: TRIPS x 10 dependent float64 sines in one thread per row.
TRIPS = 6_000
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
    if tid == 0:  # extra work: a chain of sines, folded in as an exact 0
        s += _sin_chain(x[r, 0], TRIPS, cols)
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
def _step(y, heavy):
    return math.sin(y + 1.0) if heavy else y * 0.5


@cuda.jit(device=True)
def _sin_chain(seed, trips, n):
    # trips x 10 float64 sines, each waiting for the one before (a sine never passes 2: the flag is
    # always 0), then a second, short loop through the same helper line with the sine compiled out.
    y = numba.float64(seed)
    for _ in range(trips):
        y = _step(y, True); y = _step(y, True); y = _step(y, True); y = _step(y, True); y = _step(y, True); y = _step(y, True); y = _step(y, True); y = _step(y, True); y = _step(y, True); y = _step(y, True)
    z = numba.float64(n)
    for _ in range(n % 3):
        z = _step(z, False)
    return numba.float32(y > 2.0) + numba.float32(z < 0.0)
