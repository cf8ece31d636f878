import math

import numba
from numba import cuda

MAX_TPB = 1024        # shared scratch sized for the largest block
ITEMS = 8             # target columns per thread when choosing the block size
NEG_BIG = -3.0e38     # finite stand-in for -inf (avoids inf - inf = nan when merging)


@cuda.jit
def softmax_block_per_row(out, x, cols):
    # One block per row. Pass 1 reads the row once, keeping an online (max, sum) pair per
    # thread; a shared-memory tree merges the pairs; pass 2 writes exp(x - m) / s.
    sm_m = cuda.shared.array(MAX_TPB, numba.float32)
    sm_s = cuda.shared.array(MAX_TPB, numba.float32)
    r = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    m = numba.float32(NEG_BIG)
    s = numba.float32(0)
    one = numba.float32(1)
    c = tid
    while c < cols:
        v = x[r, c]
        if v > m:
            s = s * math.exp(m - v) + one
            m = v
        else:
            s += math.exp(v - m)
        c += nt
    sm_m[tid] = m
    sm_s[tid] = s
    cuda.syncthreads()
    h = nt // 2
    while h > 0:
        if tid < h:
            m1 = sm_m[tid]
            m2 = sm_m[tid + h]
            mm = max(m1, m2)
            sm_s[tid] = sm_s[tid] * math.exp(m1 - mm) + sm_s[tid + h] * math.exp(m2 - mm)
            sm_m[tid] = mm
        cuda.syncthreads()
        h //= 2
    m = sm_m[0]
    inv = one / sm_s[0]
    c = tid
    while c < cols:
        out[r, c] = math.exp(x[r, c] - m) * inv
        c += nt


def launch(out, x):
    rows = x.shape[0]
    cols = x.shape[1]
    tpb = 32
    while tpb < MAX_TPB and tpb * ITEMS < cols:
        tpb *= 2
    softmax_block_per_row[rows, tpb](out, x, cols)
