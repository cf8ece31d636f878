"""Finding (issue "Scores and hints that mean what they say"): reduce_sum scored 1.5x over the naive
kernel with 6,400 dependent global loads that today's model counted as 100 rounds. Reproduced: the
expert kernel, plus thread 0 of block 0 hopping through x itself, 100 trips of an inner loop of 64
hops (j = int(x[j] * n): each load's address is the value of the last), folded into its block's
sum as a term that is always 0.

Stresses: dependent global loads. The model takes a constant-trip loop of at most 64 trips as
unrolled, and all the loads of one unrolled trip as one round in flight together: it sees 100
rounds where the GPU waits 6,400 times, once per hop (an L1 hit of some 35 cycles where the line
was loaded before, an L2 hit of some 260 otherwise: x's 626 lines were all read by the sum before).
A GPU: some 0.2 ms, an order of magnitude slower than the naive kernel (~15 us).
"""

import numba
from numba import cuda

# Extra work: HOP_TRIPS x HOP_BURST dependent loads of x in one thread.
HOP_TRIPS = 100
HOP_BURST = 64
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
    if cuda.blockIdx.x == 0 and tid == 0:  # extra work: a walk through x, folded in as an exact 0
        v += _walk_x(x, n)
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
def _walk_x(x, n):
    # HOP_TRIPS x HOP_BURST hops through x: x lies in [0, 1), so int(x[j] * n) is an index of x,
    # and each load waits for the one before. The flag returned is always 0.
    j = 0
    for _ in range(HOP_TRIPS):
        for _ in range(HOP_BURST):
            j = int(x[j] * n)
    return numba.float32(j >= n)
