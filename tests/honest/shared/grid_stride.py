import numba
from numba import cuda

TPB = 4


@cuda.jit
def kernel(out, a, size):
    # The loop keeps every thread of the block at the same barrier; with just enough blocks
    # it runs once.
    shared = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    stride = cuda.gridsize(1)
    base = cuda.blockIdx.x * cuda.blockDim.x
    while base < size:
        i = base + t
        if i < size:
            shared[t] = a[i]
        cuda.syncthreads()
        if i < size:
            out[i] = shared[t] + 10
        cuda.syncthreads()
        base += stride
