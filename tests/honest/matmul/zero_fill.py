import numba
from numba import cuda

TPB = 3


@cuda.jit
def kernel(out, a, b, size):
    sa = cuda.shared.array((TPB, TPB), numba.float32)
    sb = cuda.shared.array((TPB, TPB), numba.float32)
    i, j = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = numba.float32(0)
    for t in range((size + TPB - 1) // TPB):
        col = t * TPB + ty
        row = t * TPB + tx
        sa[tx, ty] = a[i, col] if i < size and col < size else 0
        sb[tx, ty] = b[row, j] if row < size and j < size else 0
        cuda.syncthreads()
        for q in range(TPB):
            acc += sa[tx, q] * sb[q, ty]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = acc
