import numba
from numba import cuda

TILE = 8


@cuda.jit
def kernel(out, a, b, m, k, n):
    # The b tile is stored transposed, so both inner reads walk along a tile row.
    sa = cuda.shared.array((TILE, TILE), numba.float32)
    sbt = cuda.shared.array((TILE, TILE), numba.float32)
    i, j = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = 0.0
    steps = (k + TILE - 1) // TILE
    t = 0
    while t < steps:
        kk = t * TILE
        sa[tx, ty] = a[i, kk + ty] if i < m and kk + ty < k else 0.0
        sbt[ty, tx] = b[kk + tx, j] if kk + tx < k and j < n else 0.0
        cuda.syncthreads()
        for q in range(TILE):
            acc += sa[tx, q] * sbt[ty, q]
        cuda.syncthreads()
        t += 1
    if i < m and j < n:
        out[i, j] = acc
