import numba
from numba import cuda

BM = 128          # rows of out per block
BN = 128          # columns of out per block
BK = 8            # depth of each shared-memory tile
TM = 8            # rows per thread (micro-tile): two runs of 4 neighbours, 64 apart
TN = 8            # columns per thread: likewise
TX = 16           # threads along a row of the block tile = BN // TN
NT = 256          # threads per block = (BM // TM) * (BN // TN)
AP = 132          # pitch of a's transposed tile: BM + 4 makes its stores conflict-free, and a
                  # multiple of 4 keeps every run of 4 on a 16-byte boundary
LOADS = 4          # elements of each of a's and b's tiles loaded per thread: BM * BK // NT
A_STEP = 32        # NT // BK: rows between one thread's loads of a's tile
B_STEP = 2         # NT // BN: rows between one thread's loads of b's tile
A_STAGE = BK * AP  # floats per stage of a's tile
B_STAGE = BK * BN  # floats per stage of b's tile
A_SMEM = 2 * A_STAGE
POS = 4095         # all-ones mask >= every shared index (see below)
B_SMEM = 2 * B_STAGE


# max_registers=128: ptxas would take about 140 registers a thread, which leaves room for one
# block of 256 threads per SM (65,536 registers); at 128 two fit, for a few spilled bytes.
@cuda.jit(max_registers=128)
def matmul_tiled(out, a, b, m, n, k):
    # Each block computes a BM x BN tile of out; each thread an 8 x 8 micro-tile in registers:
    # rows 4 ty + i and 64 + 4 ty + i, columns 4 tx + j and 64 + 4 tx + j (i, j < 4). Four
    # neighbouring floats of a 16-byte-aligned shared array are read by one vector instruction
    # (ld.shared.v4.f32, which NVVM forms from the four loads when alignment=16 and the index is a
    # known multiple of 4), so a step of the product reads its 16 operands with 4 instructions
    # instead of 16. Shared tiles are 1-D with offsets fixed per thread; two stages: the next tile
    # is fetched into registers while the current one is multiplied, one barrier per tile.
    a_s = cuda.shared.array(A_SMEM, numba.float32, alignment=16)
    b_s = cuda.shared.array(B_SMEM, numba.float32, alignment=16)
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
        # Masking with a power of two above any index proves the offsets non-negative (so the
        # negative-index wraparound Numba adds to every signed index folds away) and keeps them
        # known multiples of 4 (so the four loads of a run merge into one).
        oa = (sa + 4 * ty) & POS
        ob = (sb + 4 * tx) & POS
        for kq in range(0, BK, 4):
            ia = (oa + kq * AP) & POS
            ib = (ob + kq * BN) & POS
            # Four explicit steps per trip: LLVM does not unroll a loop this large by itself.
            rank_one_update(acc, ra, rb, a_s, b_s, ia, ib)
            rank_one_update(acc, ra, rb, a_s, b_s, ia + AP, ib + BN)
            rank_one_update(acc, ra, rb, a_s, b_s, ia + 2 * AP, ib + 2 * BN)
            rank_one_update(acc, ra, rb, a_s, b_s, ia + 3 * AP, ib + 3 * BN)
        stage = 1 - stage
    for i in range(TM):
        gr = row0 + 4 * ty + (i % 4) + 64 * (i // 4)
        if gr < m:
            for j in range(TN):
                gc = col0 + 4 * tx + (j % 4) + 64 * (j // 4)
                if gc < n:
                    out[gr, gc] = acc[i, j]


@cuda.jit(device=True, forceinline=True)
def rank_one_update(acc, ra, rb, a_s, b_s, ia, ib):
    # acc += (column kk of a's tile) x (row kk of b's tile), for this thread's 8 x 8 micro-tile.
    for i in range(4):
        ra[i] = a_s[ia + i]
        ra[4 + i] = a_s[ia + 64 + i]
    for j in range(4):
        rb[j] = b_s[ib + j]
        rb[4 + j] = b_s[ib + 64 + j]
    for i in range(TM):
        for j in range(TN):
            acc[i, j] += ra[i] * rb[j]


# A smaller tile for outputs too small to give every SM a 128 x 128 block (ragged shapes): 64 x 64
# per block, a 4 x 4 patch per thread (rows 4 ty + i, columns 4 tx + j), 16 deep. On an H100 it
# took 0.040 ms at (1025, 333, 771) where the 128 x 128 kernel took 0.069 (63 blocks for 132 SMs),
# and 0.022 at (127, 255, 63) against 0.048.
SBM = 64
SBK = 16
SAP = 68           # pitch of a's transposed small tile (a multiple of 4: runs stay aligned)
SLOADS = 4         # SBM * SBK // NT
SA_STEP = 16       # NT // SBK
SB_STEP = 4        # NT // SBM
SA_STAGE = SBK * SAP
SB_STAGE = SBK * SBM
SA_SMEM = 2 * SA_STAGE
SB_SMEM = 2 * SB_STAGE
SMS = 132          # streaming multiprocessors of an H100/H200 SXM


@cuda.jit
def matmul_small(out, a, b, m, n, k):
    # As matmul_tiled, with a 64 x 64 tile: four times the blocks for the same output.
    a_s = cuda.shared.array(SA_SMEM, numba.float32, alignment=16)
    b_s = cuda.shared.array(SB_SMEM, numba.float32, alignment=16)
    tid = cuda.threadIdx.x
    tx = tid % 16
    ty = tid // 16
    row0 = cuda.blockIdx.y * SBM
    col0 = cuda.blockIdx.x * SBM
    ar = tid // SBK
    ac = tid % SBK
    br = tid // SBM
    bc = tid % SBM
    acc = cuda.local.array((4, 4), numba.float32)
    ra = cuda.local.array(4, numba.float32)
    rb = cuda.local.array(4, numba.float32)
    pa = cuda.local.array(SLOADS, numba.float32)
    pb = cuda.local.array(SLOADS, numba.float32)
    for i in range(4):
        for j in range(4):
            acc[i, j] = numba.float32(0)
    for r in range(SLOADS):
        gr = row0 + ar + SA_STEP * r
        x = numba.float32(0)
        if gr < m and ac < k:
            x = a[gr, ac]
        pa[r] = x
        gr = br + SB_STEP * r
        x = numba.float32(0)
        if gr < k and col0 + bc < n:
            x = b[gr, col0 + bc]
        pb[r] = x
    stage = 0
    for k0 in range(0, k, SBK):
        sa = stage * SA_STAGE
        sb = stage * SB_STAGE
        for r in range(SLOADS):
            a_s[sa + ac * SAP + ar + SA_STEP * r] = pa[r]
            b_s[sb + (br + SB_STEP * r) * SBM + bc] = pb[r]
        cuda.syncthreads()
        k1 = k0 + SBK
        for r in range(SLOADS):
            gr = row0 + ar + SA_STEP * r
            x = numba.float32(0)
            if gr < m and k1 + ac < k:
                x = a[gr, k1 + ac]
            pa[r] = x
            gr = k1 + br + SB_STEP * r
            x = numba.float32(0)
            if gr < k and col0 + bc < n:
                x = b[gr, col0 + bc]
            pb[r] = x
        oa = (sa + 4 * ty) & POS
        ob = (sb + 4 * tx) & POS
        for kq in range(0, SBK, 4):
            ia = (oa + kq * SAP) & POS
            ib = (ob + kq * SBM) & POS
            small_update(acc, ra, rb, a_s, b_s, ia, ib)
            small_update(acc, ra, rb, a_s, b_s, ia + SAP, ib + SBM)
            small_update(acc, ra, rb, a_s, b_s, ia + 2 * SAP, ib + 2 * SBM)
            small_update(acc, ra, rb, a_s, b_s, ia + 3 * SAP, ib + 3 * SBM)
        stage = 1 - stage
    for i in range(4):
        gr = row0 + 4 * ty + i
        if gr < m:
            for j in range(4):
                gc = col0 + 4 * tx + j
                if gc < n:
                    out[gr, gc] = acc[i, j]


@cuda.jit(device=True, forceinline=True)
def small_update(acc, ra, rb, a_s, b_s, ia, ib):
    for i in range(4):
        ra[i] = a_s[ia + i]
    for j in range(4):
        rb[j] = b_s[ib + j]
    for i in range(4):
        for j in range(4):
            acc[i, j] += ra[i] * rb[j]


def launch(out, a, b):
    m = a.shape[0]
    k = a.shape[1]
    n = b.shape[1]
    grid = ((n + BN - 1) // BN, (m + BM - 1) // BM)
    if grid[0] * grid[1] < SMS:
        # fewer 128 x 128 blocks than SMs: most of the GPU would idle
        matmul_small[((n + SBM - 1) // SBM, (m + SBM - 1) // SBM), NT](out, a, b, m, n, k)
    else:
        matmul_tiled[grid, NT](out, a, b, m, n, k)
