"""reduce_sum, local memory: the expert kernel, plus one thread (thread 0 of block 0) that walks a
cycle through a 64-slot int32 array in local memory (cuda.local.array indexed at run time), 3,000
hops, each load's index the value of the last; folded into its block's sum as a term that is
always 0.

Stresses: dependent local-memory loads (each an L1 hit of some 30-40 cycles, plus the index
arithmetic). A GPU: about 3,000 x 40 cycles, some 60 us: a few times slower than the naive kernel.
"""

import numba
from numba import cuda

# Extra work: CHASE_HOPS dependent loads through a local array in one thread.
CHASE_HOPS = 3000
CHASE_SLOTS = 64
CHASE_STRIDE = 37
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
    if cuda.blockIdx.x == 0 and tid == 0:  # extra work: a walk through local memory, folded in as an exact 0
        v += _local_chase(x[0], CHASE_HOPS)
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
def _local_chase(seed, hops):
    # A cycle through an array in local memory (indexed at run time, so it cannot live in
    # registers): slot i holds (i * CHASE_STRIDE + shift) % CHASE_SLOTS, shift from the data, and
    # each hop loads the slot the last load named. Every slot names a slot: the flag is 0.
    nxt = cuda.local.array(CHASE_SLOTS, numba.int32)
    shift = numba.int32(abs(seed) * 64.0) % CHASE_SLOTS
    for i in range(CHASE_SLOTS):
        nxt[i] = (i * CHASE_STRIDE + shift) % CHASE_SLOTS
    p = shift
    for _ in range(hops):
        p = nxt[p]
    return numba.float32(p >= CHASE_SLOTS)
