import math

import numba
from numba import cuda

NT = 256             # threads per block
DPT = 16             # head dimensions held per thread (registers: q and the accumulator)
D_MAX = 128          # largest supported head dimension
KT = 32              # key/value rows per shared-memory tile
NEG_BIG = -3.0e38    # finite stand-in for -inf (avoids inf - inf = nan when rescaling)


@cuda.jit
def attention_flash(out, q, k, v, nh, s, d, lpq):
    # One block per (b, h, query tile). lpq threads ("a group") share one query row, each owning
    # DPT of its head dimensions (d = g + lpq * i) in registers; the block holds qt = NT // lpq
    # queries. K and V tiles of KT rows are staged in shared memory (rows past S are zeros), and
    # each group runs an online softmax: running max m, running sum l and the accumulator are
    # rescaled whenever the max grows, so every key is read once per block.
    # Causal: key tiles that start after the block's last query are never visited.
    # Every thread, also those whose query lies past S, runs every loop and reaches every barrier.
    k_s = cuda.shared.array((KT, D_MAX), numba.float32)
    v_s = cuda.shared.array((KT, D_MAX), numba.float32)
    tid = cuda.threadIdx.x
    qt = NT // lpq
    g = tid % lpq
    q0 = cuda.blockIdx.x * qt
    qi = q0 + tid // lpq
    bh = cuda.blockIdx.y
    b = bh // nh
    h = bh % nh
    scale = numba.float32(1.0) / math.sqrt(numba.float32(d))
    slope = numba.float32(math.pow(2.0, -8.0 * (h + 1) / nh))
    qr = cuda.local.array(DPT, numba.float32)
    acc = cuda.local.array(DPT, numba.float32)
    for i in range(DPT):
        c = g + lpq * i
        x = numba.float32(0)
        if qi < s and c < d:
            x = q[b, h, qi, c] * scale
        qr[i] = x
        acc[i] = numba.float32(0)
    m = numba.float32(NEG_BIG)
    l = numba.float32(0)
    kv_end = min(s, q0 + qt)
    for k0 in range(0, kv_end, KT):
        e = tid
        while e < KT * d:
            r = e // d
            c = e % d
            kx = numba.float32(0)
            vx = numba.float32(0)
            if k0 + r < s:
                kx = k[b, h, k0 + r, c]
                vx = v[b, h, k0 + r, c]
            k_s[r, c] = kx
            v_s[r, c] = vx
            e += NT
        cuda.syncthreads()
        rows = min(KT, kv_end - k0)
        for jj in range(rows):
            kj = k0 + jj
            sc = numba.float32(0)
            for i in range(DPT):
                c = g + lpq * i
                if c < d:
                    sc += qr[i] * k_s[jj, c]
            w = lpq // 2
            while w > 0:  # sum the group's partial dot products (all lanes take part)
                sc += cuda.shfl_xor_sync(0xFFFFFFFF, sc, w)
                w //= 2
            sc += slope * numba.float32(kj - qi)
            if kj <= qi:
                m_new = max(m, sc)
                corr = math.exp(m - m_new)
                p = math.exp(sc - m_new)
                l = l * corr + p
                for i in range(DPT):
                    c = g + lpq * i
                    if c < d:
                        acc[i] = acc[i] * corr + p * v_s[jj, c]
                m = m_new
        cuda.syncthreads()
    if qi < s:
        inv = numba.float32(1) / l
        for i in range(DPT):
            c = g + lpq * i
            if c < d:
                out[b, h, qi, c] = acc[i] * inv


def launch(out, q, k, v):
    nb = q.shape[0]
    nh = q.shape[1]
    s = q.shape[2]
    d = q.shape[3]
    lpq = 1
    while lpq * DPT < d:
        lpq *= 2
    qt = NT // lpq
    attention_flash[((s + qt - 1) // qt, nb * nh), NT](out, q, k, v, nh, s, d, lpq)
