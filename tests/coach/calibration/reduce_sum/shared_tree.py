"""reduce_sum, honest: a textbook shared-memory tree. Each thread of a 256-thread block loads one
element (grid-stride, so any n), the block halves its partial sums in shared memory eight times
with a barrier between steps, and thread 0 adds the block's sum into out[0]: one atomic per
block instead of one per element.

Stresses nothing unusual: memory, barriers and 79 atomics at the scored n = 20,011. A GPU: a few
microseconds, two launches; clearly faster than the naive kernel (~15 us of same-address atomics),
a little slower than the expert.
"""

import numba
from numba import cuda

TPB = 256  # threads per block, a power of two for the halving steps


@cuda.jit
def zero(out):
    # out arrives with garbage in it (the verifier poisons it with NaN): start the total at 0.
    if cuda.grid(1) == 0:
        out[0] = 0.0


@cuda.jit
def tree_sums(out, x, n):
    part = cuda.shared.array(TPB, numba.float32)
    tid = cuda.threadIdx.x
    v = numba.float32(0)
    i = cuda.grid(1)
    while i < n:
        v += x[i]
        i += cuda.gridDim.x * TPB
    part[tid] = v
    cuda.syncthreads()
    half = TPB // 2
    while half > 0:
        if tid < half:
            part[tid] += part[tid + half]
        cuda.syncthreads()
        half //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, part[0])


def launch(out, x):
    n = x.shape[0]
    blocks = (n + TPB - 1) // TPB
    zero[1, 32](out)
    tree_sums[blocks, TPB](out, x, n)
