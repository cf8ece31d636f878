import numba
from numba import cuda

TILE = 8


@cuda.jit
def kernel(out, a, b, m, k, n):
    # The GPU-Puzzles shape: load what exists, multiply over the valid part of the tile.
    a_shared = cuda.shared.array((TILE, TILE), numba.float32)
    b_shared = cuda.shared.array((TILE, TILE), numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    local_i = cuda.threadIdx.x
    local_j = cuda.threadIdx.y
    acc = 0.0
    for start in range(0, k, TILE):
        if i < m and start + local_j < k:
            a_shared[local_i, local_j] = a[i, start + local_j]
        if j < n and start + local_i < k:
            b_shared[local_i, local_j] = b[start + local_i, j]
        cuda.syncthreads()
        if i < m and j < n:
            for q in range(min(TILE, k - start)):
                acc += a_shared[local_i, q] * b_shared[q, local_j]
        cuda.syncthreads()
    if i < m and j < n:
        out[i, j] = acc
