from numba import cuda
import numba

TILE = 8


@cuda.jit
def kernel(out, a, b, m, k, n):
    a_tile = cuda.shared.array((TILE, TILE),
                               numba.float32)
    b_tile = cuda.shared.array((TILE, TILE),
                               numba.float32)
    # i is this thread's row of `out` (x), j its
    # column (y); tx, ty its place inside the tile.
    i, j = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y

    acc = 0.0
    # Slide along k one tile at a time. Every thread
    # runs the same number of steps, so every thread
    # reaches the barriers inside the loop, even those
    # outside `out`.
    for t in range((k + TILE - 1) // TILE):
        # Cooperative load: one element of each tile
        # per thread. Past an edge the tile holds
        # zero, which adds nothing to the dot product.
        a_col = t * TILE + ty
        if i < m and a_col < k:
            a_tile[tx, ty] = a[i, a_col]
        else:
            a_tile[tx, ty] = 0.0
        b_row = t * TILE + tx
        if b_row < k and j < n:
            b_tile[tx, ty] = b[b_row, j]
        else:
            b_tile[tx, ty] = 0.0
        # Both tiles complete before anyone multiplies.
        cuda.syncthreads()

        # Row tx of the a-tile times column ty of the
        # b-tile: TILE products from shared memory,
        # each loaded element of global memory reused
        # by TILE threads.
        for q in range(TILE):
            acc += a_tile[tx, q] * b_tile[q, ty]
        # Everyone done with these tiles before the
        # next step overwrites them.
        cuda.syncthreads()

    if i < m and j < n:
        out[i, j] = acc
