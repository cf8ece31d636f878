import numba
from numba import cuda

BM = 64   # rows of out per block
BN = 64   # columns of out per block
BK = 16   # depth of each shared tile
TM = 4    # rows per thread
TN = 4    # columns per thread
TX = 16   # threads along a row of the block = BN // TN
NT = 256  # threads per block = (BM // TM) * (BN // TN)


@cuda.jit
def matmul_register_tiles(out, a, b, m, n, k):
    # Each thread now computes a 4 x 4 patch of out (rows ty + 16 i, columns tx + 16 j) in
    # registers. Per step of the inner loop it reads 4 values of a and 4 of b from shared memory
    # and does 16 multiply-adds with them: four times the arithmetic per shared read, which was
    # what held the one-output-per-thread kernel back.
    a_s = cuda.shared.array((BK, BM), numba.float32)  # a's tile transposed: a_s[p, r]
    b_s = cuda.shared.array((BK, BN), numba.float32)
    tid = cuda.threadIdx.x
    tx = tid % TX
    ty = tid // TX
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    acc = cuda.local.array((TM, TN), numba.float32)
    ra = cuda.local.array(TM, numba.float32)
    rb = cuda.local.array(TN, numba.float32)
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = numba.float32(0)
    for k0 in range(0, k, BK):
        # 256 threads load the 64 x 16 tile of a and the 16 x 64 tile of b, four elements each
        for r in range(4):
            e = tid + NT * r
            ar = e // BK
            ac = e % BK
            x = numba.float32(0)
            if row0 + ar < m and k0 + ac < k:
                x = a[row0 + ar, k0 + ac]
            a_s[ac, ar] = x
            br = e // BN
            bc = e % BN
            y = numba.float32(0)
            if k0 + br < k and col0 + bc < n:
                y = b[k0 + br, col0 + bc]
            b_s[br, bc] = y
        cuda.syncthreads()
        for p in range(BK):
            for i in range(TM):
                ra[i] = a_s[p, ty + 16 * i]
            for j in range(TN):
                rb[j] = b_s[p, tx + 16 * j]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += ra[i] * rb[j]
        cuda.syncthreads()
    for i in range(TM):
        r = row0 + ty + 16 * i
        if r < m:
            for j in range(TN):
                c = col0 + tx + 16 * j
                if c < n:
                    out[r, c] = acc[i, j]


def launch(out, a, b):
    m = a.shape[0]
    k = a.shape[1]
    n = b.shape[1]
    grid = ((n + BN - 1) // BN, (m + BM - 1) // BM)
    matmul_register_tiles[grid, NT](out, a, b, m, n, k)
