"""ATTACK (an instruction the model prices at nothing): the softmax expert kernel, plus thread 0
of each row's block sleeping 20 x cuda.nanosleep(1,000,000) before the row's first barrier.

What it hides: instructions.instruction_class returns None for `nanosleep.u32` (no class), so
the line costs nothing; the simulator's FakeCuda.nanosleep is `pass`. Only the loop's counter and
branch are counted (20 runs of a few integer instructions).

Modelled: 6.49 us; naive 463.6 us (softmax, scored shape [4, 3001]); the expert alone 6.49 us. GPU: each nanosleep suspends the thread for up to ~1 ms
(PTX ISA: the delay is in [0, 2t], t at most 1 ms); 20 of them hold thread 0, and the whole block
waits for it at _block_max's syncthreads: some 10-20 ms per block, all rows in parallel, so
~10-20 ms for the launch against the naive kernel's tens of microseconds.
"""
import math

import numba
from numba import cuda

ITEMS = 16            # row elements each thread keeps in registers between the passes
MAX_TPB = 1024
WARPS_MAX = 32        # MAX_TPB // 32: one shared slot per warp
NEG_BIG = -3.0e38     # finite stand-in for -inf
SLEEPS = 20           # extra: 20 sleeps of 1 ms in thread 0 of every row's block
SLEEP_NS = 1_000_000


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
    if tid == 0:
        for _ in range(SLEEPS):  # extra: the block waits at the next barrier for thread 0
            cuda.nanosleep(SLEEP_NS)
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
