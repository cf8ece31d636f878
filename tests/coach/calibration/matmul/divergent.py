"""matmul, divergent: the expert kernel, plus warp 0 of block (0, 0) where each of the 32 lanes runs
its own loop (its own source lines and constants) of 100 dependent float64 multiply-adds, folded
into the lanes' first accumulators as a term that is always 0.

Stresses: branch divergence: 32 x 100 dependent FMAs one after another, some 25-30k cycles.
A GPU: some 15 us, about three times slower than the naive kernel (~5 us).
"""

import numba
from numba import cuda

# Extra work: the 32 lanes of one warp each in a branch of their own, DIVERGENT_STEPS steps each.
DIVERGENT_STEPS = 100
LIMIT = 1.0e30
BM = 128          # rows of out per block
BN = 128          # columns of out per block
BK = 8            # depth of each shared-memory tile
TM = 8            # rows per thread (micro-tile)
TN = 8            # columns per thread (micro-tile)
TX = 16           # threads along a row of the block tile = BN // TN
NT = 256          # threads per block = (BM // TM) * (BN // TN)
AP = 132          # pitch of a's transposed tile: BM + 4 makes its stores conflict-free
LOADS = 4          # elements of each of a's and b's tiles loaded per thread: BM * BK // NT
A_STEP = 32        # NT // BK: rows between one thread's loads of a's tile
B_STEP = 2         # NT // BN: rows between one thread's loads of b's tile
A_STAGE = BK * AP  # floats per stage of a's tile
B_STAGE = BK * BN  # floats per stage of b's tile
A_SMEM = 2 * A_STAGE
POS = 4095         # all-ones mask >= every shared index (see below)
B_SMEM = 2 * B_STAGE


@cuda.jit
def matmul_tiled(out, a, b, m, n, k):
    # Each block computes a BM x BN tile of out; each thread an 8 x 8 micro-tile in registers,
    # rows ty + 16*i and columns tx + 16*j (strided, so shared reads broadcast or hit 16
    # distinct banks and global writes coalesce). Shared tiles are 1-D with offsets fixed per
    # thread, so the unrolled inner loop addresses shared memory by constant offsets from two
    # pointers instead of recomputing 2-D indices. Two stages: the next tile is fetched into
    # registers while the current one is multiplied, so one barrier per tile suffices.
    a_s = cuda.shared.array(A_SMEM, numba.float32)
    b_s = cuda.shared.array(B_SMEM, numba.float32)
    tid = cuda.threadIdx.x
    tx = tid % TX
    ty = tid // TX
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    # This thread's share of each tile load: a's rows ar + A_STEP r at column ac, b's rows
    # br + B_STEP r at column bc.
    ar = tid // BK
    ac = tid % BK
    br = tid // BN
    bc = tid % BN
    acc = cuda.local.array((TM, TN), numba.float32)
    ra = cuda.local.array(TM, numba.float32)
    rb = cuda.local.array(TN, numba.float32)
    pa = cuda.local.array(LOADS, numba.float32)
    pb = cuda.local.array(LOADS, numba.float32)
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = numba.float32(0)
    # Prefetch tile 0 into registers (zeros outside the matrices).
    for r in range(LOADS):
        gr = row0 + ar + A_STEP * r
        x = numba.float32(0)
        if gr < m and ac < k:
            x = a[gr, ac]
        pa[r] = x
        gr = br + B_STEP * r
        x = numba.float32(0)
        if gr < k and col0 + bc < n:
            x = b[gr, col0 + bc]
        pb[r] = x
    stage = 0
    for k0 in range(0, k, BK):
        sa = stage * A_STAGE
        sb = stage * B_STAGE
        for r in range(LOADS):
            a_s[sa + ac * AP + ar + A_STEP * r] = pa[r]
            b_s[sb + (br + B_STEP * r) * BN + bc] = pb[r]
        cuda.syncthreads()
        # Fetch the next tile while this one is multiplied (its loads are in flight meanwhile).
        k1 = k0 + BK
        for r in range(LOADS):
            gr = row0 + ar + A_STEP * r
            x = numba.float32(0)
            if gr < m and k1 + ac < k:
                x = a[gr, k1 + ac]
            pa[r] = x
            gr = k1 + br + B_STEP * r
            x = numba.float32(0)
            if gr < k and col0 + bc < n:
                x = b[gr, col0 + bc]
            pb[r] = x
        # Masking with a power of two above any index proves the offsets non-negative, so the
        # negative-index wraparound Numba adds to every signed index folds away.
        oa = (sa + ty) & POS
        ob = (sb + tx) & POS
        for kq in range(0, BK, 4):
            ia = (oa + kq * AP) & POS
            ib = (ob + kq * BN) & POS
            # Four explicit steps per trip: LLVM does not unroll a loop this large by itself.
            rank_one_update(acc, ra, rb, a_s, b_s, ia, ib)
            rank_one_update(acc, ra, rb, a_s, b_s, ia + AP, ib + BN)
            rank_one_update(acc, ra, rb, a_s, b_s, ia + 2 * AP, ib + 2 * BN)
            rank_one_update(acc, ra, rb, a_s, b_s, ia + 3 * AP, ib + 3 * BN)
        stage = 1 - stage
    if cuda.blockIdx.x == 0 and cuda.blockIdx.y == 0 and tid < 32:  # extra work: 32 lanes, 32 branches, folded in as an exact 0
        acc[0, 0] += _divergent_lanes(tid, a[0, 0])
    for i in range(TM):
        gr = row0 + ty + 16 * i
        if gr < m:
            for j in range(TN):
                gc = col0 + tx + TX * j
                if gc < n:
                    out[gr, gc] = acc[i, j]


@cuda.jit(device=True, forceinline=True)
def rank_one_update(acc, ra, rb, a_s, b_s, ia, ib):
    # acc += (column kk of a's tile) x (row kk of b's tile), for this thread's 8 x 8 micro-tile.
    for i in range(TM):
        ra[i] = a_s[ia + 16 * i]
    for j in range(TN):
        rb[j] = b_s[ib + TX * j]
    for i in range(TM):
        for j in range(TN):
            acc[i, j] += ra[i] * rb[j]


def launch(out, a, b):
    m = a.shape[0]
    k = a.shape[1]
    n = b.shape[1]
    grid = ((n + BN - 1) // BN, (m + BM - 1) // BM)
    matmul_tiled[grid, NT](out, a, b, m, n, k)


@cuda.jit(device=True)
def _divergent_lanes(lane, seed):
    # Each of a warp's 32 lanes runs its own loop of DIVERGENT_STEPS dependent float64
    # multiply-adds, on source lines of its own: the warp runs the 32 loops one after another.
    # Every loop contracts (|multiplier| < 1), so the value settles and never reaches LIMIT.
    y = numba.float64(seed)
    if lane == 0:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9990 + 0.2500
    elif lane == 1:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9983 - 0.3750
    elif lane == 2:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9976 + 0.5000
    elif lane == 3:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9969 - 0.6250
    elif lane == 4:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9962 + 0.7500
    elif lane == 5:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9955 - 0.8750
    elif lane == 6:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9948 + 1.0000
    elif lane == 7:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9941 - 0.2500
    elif lane == 8:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9934 + 0.3750
    elif lane == 9:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9927 - 0.5000
    elif lane == 10:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9920 + 0.6250
    elif lane == 11:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9913 - 0.7500
    elif lane == 12:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9906 + 0.8750
    elif lane == 13:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9899 - 1.0000
    elif lane == 14:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9892 + 0.2500
    elif lane == 15:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9885 - 0.3750
    elif lane == 16:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9878 + 0.5000
    elif lane == 17:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9871 - 0.6250
    elif lane == 18:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9864 + 0.7500
    elif lane == 19:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9857 - 0.8750
    elif lane == 20:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9850 + 1.0000
    elif lane == 21:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9843 - 0.2500
    elif lane == 22:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9836 + 0.3750
    elif lane == 23:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9829 - 0.5000
    elif lane == 24:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9822 + 0.6250
    elif lane == 25:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9815 - 0.7500
    elif lane == 26:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9808 + 0.8750
    elif lane == 27:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9801 - 1.0000
    elif lane == 28:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9794 + 0.2500
    elif lane == 29:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9787 - 0.3750
    elif lane == 30:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9780 + 0.5000
    elif lane == 31:
        for _ in range(DIVERGENT_STEPS):
            y = y * 0.9773 - 0.6250
    return numba.float32(y > LIMIT)
