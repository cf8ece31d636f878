"""attention_causal past its verified sequence lengths: one block per query row, one thread per key,
the row's probabilities kept in shared memory for the weighted sum. The block has 256 threads and
the shared row 256 slots, so a query sees at most its first 256 keys: right while S <= 256, wrong
for every query past position 255 beyond it. The simulator verified S <= 175."""

import math

import numba
from numba import cuda

NT = 256             # threads per block: one key each
KMAX = 256           # probabilities of a row held in shared memory
WARPS = NT // 32
NEG_BIG = -3.0e38    # finite stand-in for -inf


@cuda.jit
def attention_row_per_block(out, q, k, v, nh, s, d):
    # One block per (batch, head, query) row. Each thread scores one key, the block agrees on the
    # row's max and sum with warp shuffles and one shared slot per warp, and the probabilities go
    # to shared memory; then the threads split the head dimension and walk the keys.
    p_s = cuda.shared.array(KMAX, numba.float32)
    red = cuda.shared.array(WARPS, numba.float32)
    row = cuda.blockIdx.x
    qi = row % s
    h = (row // s) % nh
    b = row // (s * nh)
    tid = cuda.threadIdx.x
    scale = numba.float32(1.0) / math.sqrt(numba.float32(d))
    n_keys = min(qi + 1, KMAX)  # causal: keys 0..qi
    sc = numba.float32(NEG_BIG)
    if tid < n_keys:
        dot = numba.float32(0)
        for c in range(d):
            dot += q[b, h, qi, c] * k[b, h, tid, c]
        sc = dot * scale
    m = _block_max(sc, red, tid)
    p = numba.float32(0)  # masked keys weigh exactly 0
    if tid < n_keys:
        p = math.exp(sc - m)
    p_s[tid] = p
    inv = numba.float32(1) / _block_sum(p, red, tid)
    c = tid
    while c < d:
        acc = numba.float32(0)
        for j in range(n_keys):
            acc += p_s[j] * v[b, h, j, c]
        out[b, h, qi, c] = acc * inv
        c += NT


@cuda.jit(device=True)
def _block_max(x, red, tid):
    for off in (16, 8, 4, 2, 1):
        x = max(x, cuda.shfl_xor_sync(0xFFFFFFFF, x, off))
    cuda.syncthreads()  # the slots may still be read from a previous reduction
    if tid % 32 == 0:
        red[tid // 32] = x
    cuda.syncthreads()
    x = red[0]
    for w in range(1, WARPS):
        x = max(x, red[w])
    return x


@cuda.jit(device=True)
def _block_sum(x, red, tid):
    for off in (16, 8, 4, 2, 1):
        x += cuda.shfl_xor_sync(0xFFFFFFFF, x, off)
    cuda.syncthreads()
    if tid % 32 == 0:
        red[tid // 32] = x
    cuda.syncthreads()
    x = red[0]
    for w in range(1, WARPS):
        x += red[w]
    return x


def launch(out, q, k, v):
    nb = q.shape[0]
    nh = q.shape[1]
    s = q.shape[2]
    d = q.shape[3]
    attention_row_per_block[nb * nh * s, NT](out, q, k, v, nh, s, d)
