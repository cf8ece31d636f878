import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    local_i = cuda.threadIdx.x

    # Load this block's stretch of a; threads past the
    # end contribute 0.
    if i < size:
        cache[local_i] = a[i]
    else:
        cache[local_i] = 0
    cuda.syncthreads()

    # Tree reduction (TPB is a power of two): fold the
    # upper half of the active cells onto the lower
    # half, halving the stride each step.
    # In one step the written cells (below stride) and
    # the cells read by other threads (stride and up)
    # never overlap, so there is no race; the barrier
    # at the end of each step orders it before the
    # next.
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2

    # Cell 0 now holds the block's total; one thread
    # writes it.
    if local_i == 0:
        out[cuda.blockIdx.x] = cache[0]
