from numba import cuda
import numba

TILE = 16


@cuda.jit
def kernel(out, a, b, m, k, n):
    # Another tile shape: 8 along k per step (a 16 x 8 tile of a, an 8 x 16 tile of b). Half the
    # threads load each tile, and the block takes twice as many steps.
    sa = cuda.shared.array((16, 8), numba.float32)
    sb = cuda.shared.array((8, 16), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = numba.float32(0)
    for start in range(0, k, 8):
        if tx < 8:
            c = start + tx
            sa[ty, tx] = a[row, c] if row < m and c < k else numba.float32(0)
        if ty < 8:
            r = start + ty
            sb[ty, tx] = b[r, col] if r < k and col < n else numba.float32(0)
        cuda.syncthreads()
        for q in range(8):
            acc += sa[ty, q] * sb[q, tx]
        cuda.syncthreads()
    if row < m and col < n:
        out[row, col] = acc
