import math

import numba
from numba import cuda

TPB = 256
WARPS = TPB // 32
EPS = 1e-5


@cuda.jit(fastmath=True)
def layernorm_block_per_row(out, x, gamma, beta, cols):
    # One block per row, its threads striding along it (each warp's loads are 32 neighbours);
    # the sums meet with warp shuffles and one shared slot per warp. The row is read three times:
    # for the mean, for the variance about the mean, and for the output.
    red = cuda.shared.array(WARPS, numba.float32)
    r = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    s = numba.float32(0)
    c = tid
    while c < cols:
        s += x[r, c]
        c += TPB
    inv_n = numba.float32(1) / numba.float32(cols)
    mean = _block_sum(s, red, tid) * inv_n
    s2 = numba.float32(0)
    c = tid
    while c < cols:
        dv = x[r, c] - mean
        s2 += dv * dv
        c += TPB
    rstd = numba.float32(1) / math.sqrt(_block_sum(s2, red, tid) * inv_n + numba.float32(EPS))
    c = tid
    while c < cols:
        out[r, c] = (x[r, c] - mean) * rstd * gamma[c] + beta[c]
        c += TPB


@cuda.jit(device=True)
def _block_sum(v, red, tid):
    # Sum over the block: shuffles within each warp, then every thread reads the warps' slots.
    for off in (16, 8, 4, 2, 1):
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, off)
    cuda.syncthreads()  # the slots may still be read from a previous reduction
    if tid % 32 == 0:
        red[tid // 32] = v
    cuda.syncthreads()
    v = red[0]
    for w in range(1, WARPS):
        v += red[w]
    return v


def launch(out, x, gamma, beta):
    rows = x.shape[0]
    cols = x.shape[1]
    layernorm_block_per_row[rows, TPB](out, x, gamma, beta, cols)
