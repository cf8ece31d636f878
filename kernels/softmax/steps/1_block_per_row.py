import math

import numba
from numba import cuda

TPB = 256
NEG_BIG = -3.0e38  # finite stand-in for -inf


@cuda.jit
def softmax_block_per_row(out, x, cols):
    # One block per row, its threads striding along the row: thread t reads columns t, t + 256,
    # ..., so a warp's 32 loads are 32 neighbours (one coalesced request), where one thread per
    # row made every warp read 32 different rows. The max and the sum are each reduced in shared
    # memory by a tree (a barrier per level). The row is still read three times.
    cache = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    m = numba.float32(NEG_BIG)
    c = tid
    while c < cols:
        m = max(m, x[r, c])
        c += TPB
    cache[tid] = m
    cuda.syncthreads()
    step = TPB // 2
    while step > 0:
        if tid < step:
            cache[tid] = max(cache[tid], cache[tid + step])
        cuda.syncthreads()
        step //= 2
    m = cache[0]
    cuda.syncthreads()  # everyone has read the max before the slots are reused
    s = numba.float32(0)
    c = tid
    while c < cols:
        s += math.exp(x[r, c] - m)
        c += TPB
    cache[tid] = s
    cuda.syncthreads()
    step = TPB // 2
    while step > 0:
        if tid < step:
            cache[tid] += cache[tid + step]
        cuda.syncthreads()
        step //= 2
    inv = numba.float32(1) / cache[0]
    c = tid
    while c < cols:
        out[r, c] = math.exp(x[r, c] - m) * inv
        c += TPB


def launch(out, x):
    rows = x.shape[0]
    cols = x.shape[1]
    softmax_block_per_row[rows, TPB](out, x, cols)
