"""ATTACK (same-address atomics in shared memory cost one wavefront): the expert kernel plus every
thread of every block adding 64 times into one shared float32 slot (cuda.atomic.add(hot, 0, ...)),
whose total decides a term that is always 0.

What it hides: the instruction model leaves `atom.shared` to the memory model (instructions._MEMORY),
and the memory model takes an atomic as a store: it never waits, costs its bank wavefronts on the
pipe (one, for 32 lanes on one address), and only GLOBAL same-address atomics are serialised
(modelled_time: `atomics` counts global arrays alone).

Modelled: 7.60 us; naive 14.12 us (reduce_sum, scored n = 20011); the expert alone 7.60 us. GPU: a float32 atomic add to shared memory has no native instruction;
ptxas emits a compare-and-swap loop (ATOMS.CAST.SPIN) and, on one address, only one lane of the
whole block succeeds per round. 512 threads x 64 adds = 32,768 serialised successes per block, each
a shared round trip (~20-30 cycles when contended): some 0.7-1 M cycles, ~0.3-0.5 ms, against the
naive kernel's ~15 us.
"""


import math

import numba
from numba import cuda

# Extra work: every thread adds ATOMS times into ONE shared float32 slot.
ATOMS = 64
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
    hot = cuda.shared.array(1, numba.float32)  # extra work: ATOMS same-address atomics per thread
    if tid == 0:
        hot[0] = numba.float32(0)
    cuda.syncthreads()
    for k in range(ATOMS):
        cuda.atomic.add(hot, 0, numba.float32(k & 1))
    cuda.syncthreads()
    v += numba.float32(hot[0] < 0)  # the adds are all >= 0: an exact 0
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


