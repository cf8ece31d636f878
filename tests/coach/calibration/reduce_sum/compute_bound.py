"""reduce_sum, compute-bound: the expert kernel, plus 500 trips of four independent float32
multiply-adds (2,000 FMAs) in each of the 512 threads of block 0, folded into the block's sum as
a term that is always 0 (the compiler cannot know it is).

Stresses: arithmetic issue on one SM: 16 warps, four to a scheduler, a million FMAs between them,
no memory traffic. Today's model counts memory only, so it scores this as the expert (3.0x).
A GPU: the expert's ~5 us plus some 5 us of issue-bound FMAs; still somewhat faster than the
naive kernel (~15 us of atomics), slower than the expert.
"""

import numba
from numba import cuda

# Extra work: FMA_TRIPS x 4 independent float32 FMAs in each of the first 256 threads of one block.
FMA_TRIPS = 500
LIMIT = 1.0e30
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
    if cuda.blockIdx.x == 0 and tid < 256:  # extra work: independent FMAs, folded in as an exact 0
        v += _fma_chains(x[0] + numba.float32(tid))
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
def _fma_chains(seed):
    # FMA_TRIPS trips of four independent float32 multiply-adds (4 x FMA_TRIPS FMAs in this thread,
    # four chains in flight at once). Each chain settles towards 0.5 / (1 - 0.999) = 500, so the sum
    # stays finite and below LIMIT: the flag returned is always 0, but only the chains' end says so.
    a = seed
    b = seed + numba.float32(1)
    c = seed + numba.float32(2)
    d = seed + numba.float32(3)
    k = numba.float32(0.999)
    h = numba.float32(0.5)
    for _ in range(FMA_TRIPS):
        a = a * k + h
        b = b * k + h
        c = c * k + h
        d = d * k + h
    return numba.float32(a + b + c + d > numba.float32(LIMIT))
