import math

import numba
from numba import cuda

BQ = 64              # queries per block, one per thread
BKV = 32             # keys per tile staged in shared memory
D_MAX = 128          # the largest head dimension supported
NEG_BIG = -3.0e38    # finite stand-in for -inf


@cuda.jit
def attention_tiles(out, q, k, v, doc, nh, s, d):
    # A block owns 64 queries of one (batch, head), a thread each. The keys and values go by in
    # tiles of 32 rows that the block's threads copy into shared memory together (coalesced, along
    # the head dimension), and every thread reads them from there: each k and v row is fetched
    # from global memory once per block instead of once per query. The online softmax is as before.
    k_s = cuda.shared.array((BKV, D_MAX), numba.float32)
    v_s = cuda.shared.array((BKV, D_MAX), numba.float32)
    tid = cuda.threadIdx.x
    bh = cuda.blockIdx.x
    b = bh // nh
    h = bh % nh
    q0 = cuda.blockIdx.y * BQ
    qi = q0 + tid
    scale = numba.float32(1.0) / math.sqrt(numba.float32(d))
    qr = cuda.local.array(D_MAX, numba.float32)
    acc = cuda.local.array(D_MAX, numba.float32)
    for c in range(d):
        x = numba.float32(0)
        if qi < s:
            x = q[b, h, qi, c] * scale
        qr[c] = x
        acc[c] = numba.float32(0)
    qdoc = doc[b, min(qi, s - 1)]
    m = numba.float32(NEG_BIG)
    total = numba.float32(0)
    # Causal: no key past the block's last query is needed by any of its threads.
    for k0 in range(0, min(s, q0 + BQ), BKV):
        cuda.syncthreads()  # everyone is done with the previous tile
        e = tid
        while e < BKV * d:
            row = e // d
            c = e % d
            x = numba.float32(0)
            y = numba.float32(0)
            if k0 + row < s:
                x = k[b, h, k0 + row, c]
                y = v[b, h, k0 + row, c]
            k_s[row, c] = x
            v_s[row, c] = y
            e += BQ
        cuda.syncthreads()
        for j in range(BKV):
            kj = k0 + j
            if kj <= qi and qi < s and doc[b, min(kj, s - 1)] == qdoc:
                sc = numba.float32(0)
                for c in range(d):
                    sc += qr[c] * k_s[j, c]
                if sc > m:
                    corr = math.exp(m - sc)
                    total *= corr
                    for c in range(d):
                        acc[c] *= corr
                    m = sc
                p = math.exp(sc - m)
                total += p
                for c in range(d):
                    acc[c] += p * v_s[j, c]
    if qi < s:
        inv = numba.float32(1) / total
        for c in range(d):
            out[b, h, qi, c] = acc[c] * inv


def launch(out, q, k, v, doc):
    nb = q.shape[0]
    nh = q.shape[1]
    s = q.shape[2]
    d = q.shape[3]
    attention_tiles[(nb * nh, (s + BQ - 1) // BQ), BQ](out, q, k, v, doc, nh, s, d)
