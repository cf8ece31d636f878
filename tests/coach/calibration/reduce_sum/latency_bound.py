"""reduce_sum, latency-bound: the expert kernel, plus one thread (thread 0 of block 0) that runs
2,000 dependent int64 multiply-modulos by a divisor known only at run time (2,000,000,000 + n),
folded into its block's sum as a term that is always 0.

Stresses: a long dependent chain of slow integer operations in one thread: each 64-bit remainder
by a run-time divisor is a software routine of tens of instructions, and no step can start before
the last ends. Memory traffic is the expert's. A GPU: some hundreds of cycles a step, about
0.2-0.3 ms in all: an order of magnitude slower than the naive kernel (~15 us).
"""

import numba
from numba import cuda

# Extra work: MULMOD_STEPS dependent int64 multiply-modulos by a run-time divisor in one thread.
MULMOD_STEPS = 2000
DIVISOR_BASE = 2000000000
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
    if cuda.blockIdx.x == 0 and tid == 0:  # extra work: a chain of multiply-modulos, folded in as an exact 0
        v += _mulmod_chain(x[0], DIVISOR_BASE + n, MULMOD_STEPS)
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
def _mulmod_chain(seed, divisor, steps):
    # `steps` 64-bit multiplies, each followed by a modulo by `divisor`, a number the kernel only
    # learns at run time (so no multiply-by-inverse trick: a full 64-bit remainder each time).
    # Every value stays below the divisor (< 2**31, so products fit in 63 bits): the flag is 0.
    r = numba.int64(abs(seed) * 1024.0) % divisor
    for _ in range(steps):
        r = (r * 48271 + 11) % divisor
    return numba.float32(r >= divisor)
