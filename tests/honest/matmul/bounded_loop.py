import numba
from numba import cuda

TPB = 3


@cuda.jit
def kernel(out, a, b, size):
    # Tiles filled with 0 past the edge, and the inner loop stops at the matrix's edge.
    sa = cuda.shared.array((TPB, TPB), numba.float32)
    sb = cuda.shared.array((TPB, TPB), numba.float32)
    i, j = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = numba.float32(0)
    start = 0
    while start < size:
        if i < size and start + ty < size:
            sa[tx, ty] = a[i, start + ty]
        else:
            sa[tx, ty] = 0
        if start + tx < size and j < size:
            sb[tx, ty] = b[start + tx, j]
        else:
            sb[tx, ty] = 0
        cuda.syncthreads()
        for q in range(min(TPB, size - start)):
            acc += sa[tx, q] * sb[q, ty]
        cuda.syncthreads()
        start += TPB
    if i < size and j < size:
        out[i, j] = acc
