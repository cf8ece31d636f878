import numba
from numba import cuda

TPB = 16


@cuda.jit
def matmul_shared_tiles(out, a, b, m, n, k):
    # One thread per output element still, but the block's 16 x 16 threads first copy a 16 x 16
    # tile of a and one of b into shared memory, then each thread reads its row and column of the
    # tiles from there: every element fetched from global memory is used 16 times instead of once.
    a_s = cuda.shared.array((TPB, TPB), numba.float32)
    b_s = cuda.shared.array((TPB, TPB), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TPB + tx
    row = cuda.blockIdx.y * TPB + ty
    acc = numba.float32(0)
    for k0 in range(0, k, TPB):
        x = numba.float32(0)
        if row < m and k0 + tx < k:
            x = a[row, k0 + tx]
        a_s[ty, tx] = x
        y = numba.float32(0)
        if k0 + ty < k and col < n:
            y = b[k0 + ty, col]
        b_s[ty, tx] = y
        cuda.syncthreads()
        for p in range(TPB):
            acc += a_s[ty, p] * b_s[p, tx]
        cuda.syncthreads()
    if row < m and col < n:
        out[row, col] = acc


def launch(out, a, b):
    m = a.shape[0]
    k = a.shape[1]
    n = b.shape[1]
    grid = ((n + TPB - 1) // TPB, (m + TPB - 1) // TPB)
    matmul_shared_tiles[grid, (TPB, TPB)](out, a, b, m, n, k)
