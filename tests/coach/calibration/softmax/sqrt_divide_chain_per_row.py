"""Finding (issue "Scores and hints that mean what they say"): softmax scored 83x over the naive
kernel while thread 0 of every row's block ran 400,000 dependent float64 square roots and
divisions. Reproduced: the expert kernel, plus y = sqrt(y + 2) / (y + 1.5) 400,000 times from
|x[r, 0]| in thread 0 of each row's block, folded into the row's sum as a term that is always 0.

Stresses: a dependent chain of float64 sqrt and divide (each a reciprocal estimate refined by
dependent double-precision FMAs) in one thread per row; the rows' chains run side by side on
different SMs. Today's model: the expert's 83x. A GPU: some 150-250 cycles a step, 30-50 ms:
hundreds of times slower than the naive kernel.
"""

import math

import numba
from numba import cuda

# Extra work: SQRT_DIV_STEPS dependent float64 square roots and divisions in one thread.
SQRT_DIV_STEPS = 400_000
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
    if tid == 0:  # extra work: a chain of square roots and divisions, folded in as an exact 0
        s += _sqrt_divide_chain(x[r, 0], SQRT_DIV_STEPS)
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
def _sqrt_divide_chain(seed, steps):
    # `steps` float64 square roots and divisions, each waiting for the one before. From any y >= 0,
    # sqrt(y + 2) / (y + 1.5) lies in (0, 0.95]: the flag returned is always 0.
    y = abs(numba.float64(seed))
    for _ in range(steps):
        y = math.sqrt(y + 2.0) / (y + 1.5)
    return numba.float32(y > 2.0)
