from numba import cuda
import numba

TILE = 16   # the block's patch of `out`: TILE x TILE


@cuda.jit
def kernel(out, a, b, m, k, n):
    a_tile = cuda.shared.array((TILE, TILE),
                               numba.float32)
    b_tile = cuda.shared.array((TILE, TILE),
                               numba.float32)
    # x walks along a row of `out` (its columns), y
    # down its rows: the loads of `b` and the store
    # are coalesced.
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    # Correct, but every product costs two global
    # loads: each element of `a` and `b` is fetched
    # once per thread that needs it.
    # FILL ME IN (about 20 lines): slide shared tiles
    # along k instead.
    if row < m and col < n:
        acc = numba.float32(0)
        for p in range(k):
            acc += a[row, p] * b[p, col]
        out[row, col] = acc
