import numba
from numba import cuda

TPB = 16


@cuda.jit
def kernel(out, a, size):
    # Two buffers, read one and write the other each step.
    buf = cuda.shared.array((2, TPB), numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        buf[0, i] = a[i]
    else:
        buf[0, i] = 0
    cuda.syncthreads()
    src = 0
    offset = 1
    while offset < TPB:
        dst = 1 - src
        if i >= offset:
            buf[dst, i] = buf[src, i] + buf[src, i - offset]
        else:
            buf[dst, i] = buf[src, i]
        cuda.syncthreads()
        src = dst
        offset *= 2
    if i < size:
        out[i] = buf[src, i]
