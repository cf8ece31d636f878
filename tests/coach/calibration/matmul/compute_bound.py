"""matmul, compute-bound: the expert kernel (128 x 128 tiles, 8 x 8 per thread), plus 500 trips of
four independent float32 multiply-adds (2,000 FMAs) in each of the 256 threads of block (0, 0),
folded into the thread's first accumulator as a term that is always 0.

Stresses: arithmetic issue on one SM (8 warps, half a million FMAs), next to a matmul that is
itself launch-bound at this shape. Today's model scores it as the expert (0.98x). A GPU: the
expert's ~5 us plus some 3-5 us: slower than the naive kernel (~5 us), up to twice as slow.
"""

import numba
from numba import cuda

# Extra work: FMA_TRIPS x 4 independent float32 FMAs in each of the first 256 threads of one block.
FMA_TRIPS = 500
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
    if cuda.blockIdx.x == 0 and cuda.blockIdx.y == 0 and tid < 256:  # extra work: independent FMAs, folded in as an exact 0
        acc[0, 0] += _fma_chains(a[0, 0] + numba.float32(tid))
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
def _fma_chains(seed):
    # FMA_TRIPS trips of four independent float32 multiply-adds (4 x FMA_TRIPS FMAs in this thread,
    # four chains in flight at once). Each chain settles towards 0.5 / (1 - 0.999) = 500, so the sum
    # stays finite and below LIMIT: the flag returned is always 0, but only the chains' end says so.
    a = seed
    b = seed + numba.float32(1)
    c = seed + numba.float32(2)
    d = seed + numba.float32(3)
    k = numba.float32(0.999)
    h = numba.float32(0.5)
    for _ in range(FMA_TRIPS):
        a = a * k + h
        b = b * k + h
        c = c * k + h
        d = d * k + h
    return numba.float32(a + b + c + d > numba.float32(LIMIT))
