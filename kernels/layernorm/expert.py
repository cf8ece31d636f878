import math

import numba
from numba import cuda

MAX_TPB = 1024   # shared scratch sized for the largest block
ITEMS = 8        # target columns per thread when choosing the block size
EPS = 1e-5


@cuda.jit
def layernorm_block_per_row(out, x, gamma, beta, cols):
    # One block per row. One read pass accumulates sum(d) and sum(d*d) of d = x - x[r, 0]
    # (shifting by a sample of the row keeps E[d^2] - E[d]^2 accurate in float32); a
    # shared-memory tree sums both; a second pass writes the normalised, scaled row.
    sm1 = cuda.shared.array(MAX_TPB, numba.float32)
    sm2 = cuda.shared.array(MAX_TPB, numba.float32)
    r = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    k = x[r, 0]
    s1 = numba.float32(0)
    s2 = numba.float32(0)
    c = tid
    while c < cols:
        d = x[r, c] - k
        s1 += d
        s2 += d * d
        c += nt
    sm1[tid] = s1
    sm2[tid] = s2
    cuda.syncthreads()
    h = nt // 2
    while h > 0:
        if tid < h:
            sm1[tid] += sm1[tid + h]
            sm2[tid] += sm2[tid + h]
        cuda.syncthreads()
        h //= 2
    inv_n = numba.float32(1) / numba.float32(cols)
    mean_d = sm1[0] * inv_n
    var = max(sm2[0] * inv_n - mean_d * mean_d, numba.float32(0))
    rstd = numba.float32(1) / math.sqrt(var + numba.float32(EPS))
    mean = k + mean_d
    c = tid
    while c < cols:
        out[r, c] = (x[r, c] - mean) * rstd * gamma[c] + beta[c]
        c += nt


def launch(out, x, gamma, beta):
    rows = x.shape[0]
    cols = x.shape[1]
    tpb = 32
    while tpb < MAX_TPB and tpb * ITEMS < cols:
        tpb *= 2
    layernorm_block_per_row[rows, tpb](out, x, gamma, beta, cols)
