"""Finding (issue "Scores and hints that mean what they say"): reduce_sum scored 3.0x over the naive
kernel while one thread computed 300,000 dependent float64 sines. Reproduced: the expert kernel,
plus thread 0 of block 0 running y = sin(y + 1) 300,000 times from x[0] in float64, folded into its
block's sum as a term that is always 0 (a sine never passes 2).

Stresses: a dependent chain of float64 transcendental calls (a range reduction and a polynomial of
dependent double-precision FMAs each) in a single thread. Today's model: the expert's 3.0x. A GPU:
some 100-200 cycles a sine, tens of milliseconds: thousands of times slower than the naive kernel.
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
    for _ in range(steps):
        y = math.sin(y + 1.0)
    return numba.float32(y > 2.0)
