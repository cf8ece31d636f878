import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, b, size):
    # The block's total in one shared cell, built with shared atomics; one thread writes it.
    total = cuda.shared.array(1, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if t == 0:
        total[0] = 0
    cuda.syncthreads()
    if i < size:
        cuda.atomic.add(total, 0, a[i] * b[i])
    cuda.syncthreads()
    if t == 0:
        out[0] = total[0]
