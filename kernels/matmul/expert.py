import numba
from numba import cuda

BM = 128          # rows of out per block
BN = 128          # columns of out per block
BK = 8            # depth of each shared-memory tile
TM = 8            # rows per thread (micro-tile)
TN = 8            # columns per thread (micro-tile)
TX = 16           # threads along x = BN // TN
TY = 16           # threads along y = BM // TM
NT = 256          # threads per block = TX * TY
A_LOADS = 4       # BM * BK // NT elements of a loaded per thread per tile
B_LOADS = 4       # BK * BN // NT elements of b loaded per thread per tile
A_PITCH = 129     # BM + 1: padding keeps the transposed stores of a conflict-free


@cuda.jit
def matmul_tiled(out, a, b, m, n, k):
    # Each block computes a BM x BN tile of out; each thread an 8 x 8 micro-tile held in
    # registers, with rows ty + 16*i and columns tx + 16*j (strided so shared reads and
    # global writes are conflict-free and coalesced). a's tile is stored transposed.
    a_s = cuda.shared.array((BK, A_PITCH), numba.float32)
    b_s = cuda.shared.array((BK, BN), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tid = ty * TX + tx
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    acc = cuda.local.array((TM, TN), numba.float32)
    ra = cuda.local.array(TM, numba.float32)
    rb = cuda.local.array(TN, numba.float32)
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = numba.float32(0)
    for k0 in range(0, k, BK):
        for r in range(A_LOADS):
            e = tid + r * NT
            ar = e // BK
            ac = e % BK
            gr = row0 + ar
            gc = k0 + ac
            v = numba.float32(0)
            if gr < m and gc < k:
                v = a[gr, gc]
            a_s[ac, ar] = v
        for r in range(B_LOADS):
            e = tid + r * NT
            br = e // BN
            bc = e % BN
            gr = k0 + br
            gc = col0 + bc
            v = numba.float32(0)
            if gr < k and gc < n:
                v = b[gr, gc]
            b_s[br, bc] = v
        cuda.syncthreads()
        for kk in range(BK):
            for i in range(TM):
                ra[i] = a_s[kk, ty + i * TY]
            for j in range(TN):
                rb[j] = b_s[kk, tx + j * TX]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += ra[i] * rb[j]
        cuda.syncthreads()
    for i in range(TM):
        gr = row0 + ty + i * TY
        if gr < m:
            for j in range(TN):
                gc = col0 + tx + j * TX
                if gc < n:
                    out[gr, gc] = acc[i, j]


def launch(out, a, b):
    m = a.shape[0]
    k = a.shape[1]
    n = b.shape[1]
    grid = ((n + BN - 1) // BN, (m + BM - 1) // BM)
    matmul_tiled[grid, (TX, TY)](out, a, b, m, n, k)
