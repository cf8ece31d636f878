"""ATTACK (a library loop inside one line counted as one trip): the expert kernel plus thread 0 of
block 0 running 200 dependent float64 math.fmod(~1e300, ~1e-300).

What it hides: libdevice's __nv_fmod, inlined into the line, reduces the dividend by a shift-and-
subtract loop whose trip count grows with the exponent difference (here ~1,990 bits). In
instructions.line_costs a line that lies in any PTX loop is costed by its loop regions only, and the
CHEAPEST one is taken as "one copy" (meant for an unrolled loop's remainder). So the fmod line costs
one trip of libdevice's smallest inner loop (~22 issue cycles, ~24 latency) per run. The simulator
runs math.fmod as one C call; the tracer counts 200 runs.

Modelled: 11.99 us; naive 14.12 us (reduce_sum, scored n = 20011); the expert alone 7.60 us. GPU: each fmod walks ~2,000 exponent bits in a loop of dependent 64-bit
integer/fp64 steps, tens of thousands of cycles per call; 200 dependent calls, several million
cycles, milliseconds, against the naive kernel's ~15 us.
"""


import math

import numba
from numba import cuda

# Extra work: FMOD_STEPS dependent float64 fmods of 1e300 by ~1e-300 in one thread.
FMOD_STEPS = 200
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
        v += _fmod_chain(x[0], FMOD_STEPS)
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
def _fmod_chain(seed, steps):
    # `steps` remainders of ~1e300 by ~1e-300, each waiting for the one before. A remainder by a
    # divisor under 1e-299 never passes 2: the flag returned is always 0.
    y = numba.float64(seed) * 1e-310
    for _ in range(steps):
        y = math.fmod(1e300 * (1.0 + y), 1e-300 + y)
    return numba.float32(y > 2.0)
