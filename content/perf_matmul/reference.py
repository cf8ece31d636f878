from numba import cuda
import numba

TILE = 16   # the block's patch of `out`: TILE x TILE


@cuda.jit
def kernel(out, a, b, m, k, n):
    a_tile = cuda.shared.array((TILE, TILE),
                               numba.float32)
    b_tile = cuda.shared.array((TILE, TILE),
                               numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    # x walks along a row of `out` (its columns), y
    # down its rows.
    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty

    acc = numba.float32(0)
    # Slide along k one tile at a time; every thread
    # runs every step, so all reach the barriers.
    for t in range((k + TILE - 1) // TILE):
        # Each thread loads one element of each tile,
        # with x along a row of `a` and of `b`: a
        # warp (two rows of 16 threads) reads two runs
        # of 16 neighbours. Past an edge the tile
        # holds 0, which adds nothing.
        a_col = t * TILE + tx
        if row < m and a_col < k:
            a_tile[ty, tx] = a[row, a_col]
        else:
            a_tile[ty, tx] = 0.0
        b_row = t * TILE + ty
        if b_row < k and col < n:
            b_tile[ty, tx] = b[b_row, col]
        else:
            b_tile[ty, tx] = 0.0
        cuda.syncthreads()

        # TILE multiply-adds from shared memory. Each
        # element loaded from global memory above now
        # serves TILE threads: the block's 256 loads
        # of each input feed 16 x 16 x 16 products.
        for q in range(TILE):
            acc += a_tile[ty, q] * b_tile[q, tx]
        # No tile is overwritten while still in use.
        cuda.syncthreads()

    if row < m and col < n:
        out[row, col] = acc
