import numba
from numba import cuda

TPB = 4


@cuda.jit
def kernel(out, a, size):
    # Each block gets its own shared array of TPB
    # float32 cells.
    shared = cuda.shared.array(TPB, numba.float32)
    # Position in the whole array.
    i = cuda.grid(1)
    # Position in this block (and its shared array).
    local_i = cuda.threadIdx.x

    # Load: one global read per thread, into this
    # thread's shared cell. Threads past the end fill
    # their cell with 0, so nothing stays unwritten.
    if i < size:
        shared[local_i] = a[i]
    else:
        shared[local_i] = 0

    # Every thread of the block waits here until all
    # the loads are done. It sits outside any `if`,
    # so every thread reaches it.
    cuda.syncthreads()

    # Use: read back from shared memory and write the
    # result once.
    if i < size:
        out[i] = shared[local_i] + 10
