"""ATTACK (work the compiler files under line 0): the softmax expert kernel plus thread 0 of each
row's block running 30,000 trips of `if k & 1: y = sin(sin(sin(sin(y + 1)))) else: <the same>`,
120,000 dependent float64 sines.

What it hides: the two arms are identical, so LLVM's SimplifyCFG sinks the common code into the
block where they meet and gives it a merged debug location, line 0 (`.loc 1 0`). Every sine's
instructions then sit under line 0, and instructions.line_costs drops line 0 (`if not line:
continue`), so lines `if k & 1`, and both arms, cost nothing. The tracer counts their runs, at 0
cycles each; only the loop header's ~24 cycles a trip remain.

Modelled: 370.2 us; naive 463.6 us (softmax, scored shape [4, 3001]). With one arm (no if) the same work is modelled at 8,491 us. GPU: 120,000 dependent fp64 sines per row (rows in parallel), ~100-200
cycles each: 12-24 M cycles, ~6-12 ms, many times the naive kernel.
"""


import math

import numba
from numba import cuda

# Extra work: 4 x STEPS dependent float64 sines in one thread per row, written in both arms of an if.
STEPS = 30_000
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
        s += _sin_chain(x[r, 0], STEPS)
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
def _sin_chain(seed, steps):
    # 4 x `steps` float64 sines, each waiting for the one before; the same sine in both arms of an if.
    # A sine never passes 2: the flag returned is always 0.
    y = numba.float64(seed)
    for k in range(steps):
        if k & 1:
            y = math.sin(math.sin(math.sin(math.sin(y + 1.0))))
        else:
            y = math.sin(math.sin(math.sin(math.sin(y + 1.0))))
    return numba.float32(y > 2.0)
