"""ATTACK (tracer loses loop trips): the expert kernel plus thread 0 of block 0 running 300,000
dependent float64 sines, in a `while` whose condition starts on the line after `while (`.

What it hides: linecounts.LineRuns counts a loop's trips by the line events of its header line.
Python 3.11 reports a `while` test on the line of its first instruction, here the continuation
line `k < steps):`, which statement_lines maps to the header and LineRuns then skips
(`if line in first_line: return`). The header's count never moves, so every trip of the body has
the same key (phase, line, caller, (0,)) and the 300,000 trips count as ONE run of each line.

Modelled: 7.62 us; naive 14.12 us (reduce_sum, scored n = 20011); the expert alone 7.60 us. The same chain in a plain `for` (tests/coach/calibration/reduce_sum/sin_chain_one_thread.py) is modelled at 24,856 us. GPU: 300,000 dependent float64
sines at ~100-200 cycles each (range reduction + dependent fp64 FMA polynomial, fp64 at 1/2 rate
on H100/H200) is 30-60 M cycles, ~15-30 ms at 1.98 GHz: thousands of times the naive kernel.
"""

import math

import numba
from numba import cuda

# Extra work: SIN_STEPS dependent float64 sines in one thread.
SIN_STEPS = 300_000
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
    if cuda.blockIdx.x == 0 and tid == 0:  # extra work: a chain of sines, folded in as an exact 0
        v += _sin_chain(x[0], SIN_STEPS)
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
def _sin_chain(seed, steps):
    # `steps` float64 sines, each waiting for the one before. A sine never passes 2: the flag
    # returned is always 0, but the compiler cannot know that without running the chain.
    y = numba.float64(seed)
    k = 0
    while (
            k < steps):
        y = math.sin(y + 1.0)
        k += 1
    return numba.float32(y > 2.0)
