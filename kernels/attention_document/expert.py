import math

import numba
from numba import cuda

BQ = 64              # queries per block
BKV = 64             # keys per tile of the score matrix
NT = 256             # threads per block, 16 x 16: each owns a 4 x 4 micro-tile of the scores
TX = 16              # threads along the keys (and along the head dimension of out)
DC = 16              # head dimensions per staged chunk of q and k
VC = 32              # rows per staged chunk of v
D_MAX = 128          # largest supported head dimension (v's chunk is sized for it)
QP = 68              # pitch of the transposed q and k tiles and of p's rows: a multiple of 4, so
                     # every run of 4 neighbours starts on a 16-byte boundary
NEG_BIG = -3.0e38    # finite stand-in for -inf (avoids inf - inf = nan when rescaling)
POS = 8191           # all-ones mask above every shared index (see the kernel)
QK_SMEM = DC * QP
P_SMEM = BKV * QP
V_SMEM = VC * D_MAX


# No register cap here: ptxas takes about 200 registers a thread (one 256-thread block per SM), and
# capped at 128 (two blocks) it spilled 296 bytes a thread: 0.391 ms against 0.332 uncapped on an
# H100 (bench/results/kernels_h100.md).
@cuda.jit(fastmath=True)
def attention_flash(out, q, k, v, doc, nh, s, d, n_qt):
    # Head dimensions up to D_MAX: each thread's slice of out is 4 rows x 8 columns.
    _flash_block(out, q, k, v, doc, nh, s, d, n_qt, 8)


@cuda.jit(fastmath=True)
def attention_flash_narrow(out, q, k, v, doc, nh, s, d, n_qt):
    # Head dimensions up to 64: 4 x 4 slices of out, no work spent on columns that do not exist.
    _flash_block(out, q, k, v, doc, nh, s, d, n_qt, 4)


@cuda.jit(device=True, forceinline=True, fastmath=True)
def _flash_block(out, q, k, v, doc, nh, s, d, n_qt, dj):
    # A block owns BQ queries of one (batch, head) and walks the keys in tiles of BKV, like a
    # register-tiled matmul done twice with an online softmax in between:
    #   scores = q k^T: q and k are staged through shared memory DC head dimensions at a time,
    #     transposed; each thread accumulates rows 4 ty + i, keys 4 tx + j of the tile in
    #     registers, reading its 4 rows and its 4 keys of a dimension with two vector loads;
    #   online softmax: the 16 threads of a row (lanes of one half-warp) agree on its running
    #     max with shuffles; the row sum stays a per-thread partial until the end;
    #   out += p v: p goes to shared memory row by row (one vector store per row), v is staged
    #     VC rows at a time, and each thread accumulates rows 4 ty + i, columns 4 tx + j (and
    #     64 + 4 tx + j when D > 64) of out, four keys at a time: its 4 rows of p over 4 keys
    #     and the 4 keys' rows of its columns of v are vector loads.
    # dj (4 or 8) is a constant once this helper is inlined, so every register array is fully
    # unrolled. Every thread runs every loop and reaches every barrier.
    # 16-byte aligned: four neighbouring floats at a known multiple of 4 are read (or written) by
    # one vector instruction, ld.shared.v4.f32, which NVVM forms from the four scalar accesses.
    q_s = cuda.shared.array(QK_SMEM, numba.float32, alignment=16)
    k_s = cuda.shared.array(QK_SMEM, numba.float32, alignment=16)
    p_s = cuda.shared.array(P_SMEM, numba.float32, alignment=16)
    v_s = cuda.shared.array(V_SMEM, numba.float32, alignment=16)
    tid = cuda.threadIdx.x
    tx = tid % TX
    ty = tid // TX
    bh = cuda.blockIdx.x
    b = bh // nh
    h = bh % nh
    # Last query tile first: under a causal mask it has the most keys, so it should start early.
    q0 = (n_qt - 1 - cuda.blockIdx.y) * BQ
    scale = numba.float32(1.0) / math.sqrt(numba.float32(d))
    lc = tid % DC        # this thread loads column lc of rows lr + 16 r of a q or k chunk
    lr = tid // DC
    vc = tid % D_MAX     # and column vc of rows vr + 2 r of a v chunk
    vr = tid // D_MAX
    # Masking with POS proves shared indices non-negative, so the negative-index wraparound
    # Numba puts on every signed index folds away and inner loops address by constant offsets.
    oq = (4 * ty) & POS
    ok = (4 * tx) & POS
    op = (4 * ty * QP) & POS
    sc = cuda.local.array((4, 4), numba.float32)
    acc = cuda.local.array((4, 8), numba.float32)
    m = cuda.local.array(4, numba.float32)
    l = cuda.local.array(4, numba.float32)
    ra = cuda.local.array(4, numba.float32)
    rb = cuda.local.array(8, numba.float32)
    pa = cuda.local.array((4, 4), numba.float32)
    vb = cuda.local.array((4, 8), numba.float32)
    # Causal: key tiles past the block's last query are never visited.
    first_doc = doc[b, min(q0, s - 1)]
    qdoc = cuda.local.array(4, numba.int32)
    kdoc = cuda.local.array(4, numba.int32)
    for i in range(4):
        qdoc[i] = doc[b, min(q0 + 4 * ty + i, s - 1)]
    for i in range(4):
        m[i] = numba.float32(NEG_BIG)
        l[i] = numba.float32(0)
        for j in range(dj):
            acc[i, j] = numba.float32(0)
    for k0 in range(0, min(s, q0 + BQ), BKV):
        # Documents are sorted: a key tile whose last id is below the block's first query's
        # id lies wholly in earlier documents (uniform across the block, so no barrier
        # is skipped by only some threads).
        if doc[b, min(k0 + BKV, s) - 1] < first_doc:
            continue
        for i in range(4):
            for j in range(4):
                sc[i, j] = numba.float32(0)
        for c0 in range(0, d, DC):
            cuda.syncthreads()  # everyone is done with the previous chunk
            for r in range(4):
                row = lr + 16 * r
                x = numba.float32(0)
                y = numba.float32(0)
                if c0 + lc < d:
                    if q0 + row < s:
                        x = q[b, h, q0 + row, c0 + lc]
                    if k0 + row < s:
                        y = k[b, h, k0 + row, c0 + lc]
                q_s[lc * QP + row] = x
                k_s[lc * QP + row] = y
            cuda.syncthreads()
            # Only the chunk's real dimensions, in steps of 4 (the rest of the chunk is zeros).
            for dd in range(0, min(DC, d - c0), 4):
                ia = (oq + dd * QP) & POS
                ib = (ok + dd * QP) & POS
                # Four explicit steps per trip: LLVM does not unroll a loop this large itself.
                _outer_product(sc, ra, rb, q_s, k_s, ia, ib, 4)
                _outer_product(sc, ra, rb, q_s, k_s, ia + QP, ib + QP, 4)
                _outer_product(sc, ra, rb, q_s, k_s, ia + 2 * QP, ib + 2 * QP, 4)
                _outer_product(sc, ra, rb, q_s, k_s, ia + 3 * QP, ib + 3 * QP, 4)
        for j in range(4):
            kdoc[j] = doc[b, min(k0 + 4 * tx + j, s - 1)]
        for i in range(4):
            qi = q0 + 4 * ty + i
            mt = m[i]
            for j in range(4):
                kj = k0 + 4 * tx + j
                x = sc[i, j] * scale
                if not (kj <= qi and kj < s and kdoc[j] == qdoc[i]):
                    x = numba.float32(NEG_BIG)
                sc[i, j] = x
                mt = max(mt, x)
            # The row's max over its 16 threads: xor offsets below 16 stay in the half-warp.
            mt = max(mt, cuda.shfl_xor_sync(0xFFFFFFFF, mt, 8))
            mt = max(mt, cuda.shfl_xor_sync(0xFFFFFFFF, mt, 4))
            mt = max(mt, cuda.shfl_xor_sync(0xFFFFFFFF, mt, 2))
            mt = max(mt, cuda.shfl_xor_sync(0xFFFFFFFF, mt, 1))
            corr = math.exp(m[i] - mt)
            m[i] = mt
            ls = numba.float32(0)
            pr = (op + i * QP + ok) & POS  # this thread's 4 keys of row i of p: one vector store
            for j in range(4):
                # Masked keys weigh exactly 0, even in an all-masked row. The exponential is taken
                # either way and then chosen, not branched around: no branch keeps the four
                # stores below in one basic block, where NVVM makes them one vector store.
                e = math.exp(sc[i, j] - mt)
                p = e if sc[i, j] != NEG_BIG else numba.float32(0)
                ls += p
                p_s[pr + j] = p
            l[i] = l[i] * corr + ls
            for j in range(dj):
                acc[i, j] *= corr
        rows = min(BKV, s - k0)  # keys of this tile that exist
        for v0 in range(0, rows, VC):
            cuda.syncthreads()  # p is complete, and everyone is done with the previous v chunk
            for r in range(VC // 2):
                row = vr + 2 * r
                x = numba.float32(0)
                if vc < d and k0 + v0 + row < s:
                    x = v[b, h, k0 + v0 + row, vc]
                v_s[row * D_MAX + vc] = x
            cuda.syncthreads()
            for kk in range(0, min(VC, rows - v0), 4):
                _four_keys(acc, pa, vb, p_s, v_s, (op + v0 + kk) & POS, (ok + kk * D_MAX) & POS, dj)
    for i in range(4):
        li = l[i]
        li += cuda.shfl_xor_sync(0xFFFFFFFF, li, 8)
        li += cuda.shfl_xor_sync(0xFFFFFFFF, li, 4)
        li += cuda.shfl_xor_sync(0xFFFFFFFF, li, 2)
        li += cuda.shfl_xor_sync(0xFFFFFFFF, li, 1)
        qi = q0 + 4 * ty + i
        if qi < s:
            inv = numba.float32(1) / li
            for j in range(dj):
                c = 4 * tx + j % 4 + 64 * (j // 4)
                if c < d:
                    out[b, h, qi, c] = acc[i, j] * inv


@cuda.jit(device=True, forceinline=True)
def _outer_product(acc, ra, rb, a_s, b_s, ia, ib, nj):
    # acc[i, j] += a_s[ia + i] * b_s[ib + j]: one step of a register-tiled product; each run of
    # four neighbours is one vector load.
    for i in range(4):
        ra[i] = a_s[ia + i]
    for j in range(nj):
        rb[j] = b_s[ib + j]
    for i in range(4):
        for j in range(nj):
            acc[i, j] += ra[i] * rb[j]


@cuda.jit(device=True, forceinline=True)
def _four_keys(acc, pa, vb, p_s, v_s, ip, iv, dj):
    # acc[i, j] += sum over four keys u of p[row i, key u] * v[key u, column j]: this thread's
    # 4 rows of p over the 4 keys (one vector load a row), and the 4 keys' rows of v at its
    # columns 4 tx + j and, when dj is 8, 64 + 4 tx + j (one vector load per 4 columns).
    for u in range(4):
        for j in range(4):
            vb[u, j] = v_s[iv + u * D_MAX + j]
        if dj == 8:
            for j in range(4):
                vb[u, 4 + j] = v_s[iv + u * D_MAX + 64 + j]
    for i in range(4):  # row by row: only one row of p is held at a time
        for u in range(4):
            pa[i, u] = p_s[ip + i * QP + u]
        for u in range(4):
            for j in range(dj):
                acc[i, j] += pa[i, u] * vb[u, j]


def launch(out, q, k, v, doc):
    nb = q.shape[0]
    nh = q.shape[1]
    s = q.shape[2]
    d = q.shape[3]
    n_qt = (s + BQ - 1) // BQ  # query tiles per (batch, head)
    grid = (nb * nh, n_qt)
    if d <= 64:
        attention_flash_narrow[grid, NT](out, q, k, v, doc, nh, s, d, n_qt)
    else:
        attention_flash[grid, NT](out, q, k, v, doc, nh, s, d, n_qt)
