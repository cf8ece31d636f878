"""layernorm with gamma and beta fetched beside the row: bench/variants' params_early (5cd1cf8).

It passed `gpu-tutor verify --backend sim`, then failed to launch on an H100 (2026-12-07, bench/
expert_sweep.py at (3, 65537)): CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES. Its 16 row values, gamma and beta
held in registers take ptxas to about 95 registers a thread, and launch() gives rows longer than
8,192 columns blocks of 1,024 threads: 98,304 registers, where an SM holds 65,536.
"""

import math

import numba
from numba import cuda

ITEMS = 16       # row elements each thread keeps in registers between the passes
MAX_TPB = 1024
WARPS_MAX = 32   # MAX_TPB // 32: one shared slot per warp
EPS = 1e-5


@cuda.jit(fastmath=True)
def layernorm_block_per_row(out, x, gamma, beta, cols):
    # One block per row. The row is read from memory once into registers (ITEMS per thread, all
    # loads independent, so many are in flight). The mean, then the variance as the mean of
    # (x - mean)^2 (two passes over registers: exact, no cancellation), are reduced with warp
    # shuffles plus one shared slot per warp; the output is written from the registers. Rows
    # longer than ITEMS x threads read their remainder again from memory.
    red = cuda.shared.array(WARPS_MAX, numba.float32)
    xr = cuda.local.array(ITEMS, numba.float32)
    gr = cuda.local.array(ITEMS, numba.float32)
    br = cuda.local.array(ITEMS, numba.float32)
    r = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    held = ITEMS * nt
    s = numba.float32(0)
    for t in range(ITEMS):
        c = tid + t * nt
        v = numba.float32(0)
        if c < cols:
            v = x[r, c]
        xr[t] = v
    # gamma and beta are fetched now, beside the row, so their loads are in flight while the
    # row is reduced instead of standing in the way of every store at the end.
    for t in range(ITEMS):
        c = tid + t * nt
        g = numba.float32(0)
        o = numba.float32(0)
        if c < cols:
            g = gamma[c]
            o = beta[c]
        gr[t] = g
        br[t] = o
    for t in range(ITEMS):
        s += xr[t]
    c = held + tid
    while c < cols:
        s += x[r, c]
        c += nt
    inv_n = numba.float32(1) / numba.float32(cols)
    mean = _block_sum(s, red, tid, nt) * inv_n
    s2 = numba.float32(0)
    for t in range(ITEMS):
        dv = numba.float32(0)  # padding slots (past the row) add nothing
        if tid + t * nt < cols:
            dv = xr[t] - mean
        s2 += dv * dv
    c = held + tid
    while c < cols:
        dv = x[r, c] - mean
        s2 += dv * dv
        c += nt
    var = _block_sum(s2, red, tid, nt) * inv_n
    rstd = numba.float32(1) / math.sqrt(var + numba.float32(EPS))
    for t in range(ITEMS):
        c = tid + t * nt
        if c < cols:
            out[r, c] = (xr[t] - mean) * rstd * gr[t] + br[t]
    c = held + tid
    while c < cols:
        out[r, c] = (x[r, c] - mean) * rstd * gamma[c] + beta[c]
        c += nt


@cuda.jit(device=True)
def _block_sum(v, red, tid, nt):
    # Sum over the block: shuffles within each warp, then every thread reads the warps' slots.
    for off in (16, 8, 4, 2, 1):
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, off)
    cuda.syncthreads()  # the slots may still be read from a previous reduction
    if tid % 32 == 0:
        red[tid // 32] = v
    cuda.syncthreads()
    v = red[0]
    for w in range(1, (nt + 31) // 32):
        v += red[w]
    return v


def launch(out, x, gamma, beta):
    rows = x.shape[0]
    cols = x.shape[1]
    # Enough threads that each holds at most ITEMS elements, whole warps, at most MAX_TPB.
    tpb = 32
    while tpb < MAX_TPB and tpb * ITEMS < cols:
        tpb *= 2
    layernorm_block_per_row[rows, tpb](out, x, gamma, beta, cols)
