import numba
from numba import cuda

BINS = 8   # values are in [0, BINS)
# TPB >= BINS: one thread can look after each bin.
TPB = 16   # threads per block


@cuda.jit
def kernel(out, a, size):
    # This block's private histogram, in fast on-chip
    # shared memory.
    block_hist = cuda.shared.array(BINS, numba.int32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x

    # Shared memory starts with garbage: the first
    # BINS threads clear one bin each.
    if t < BINS:
        block_hist[t] = 0
    cuda.syncthreads()

    # Count this thread's value. Other threads of the
    # block may hit the same bin at the same moment,
    # so the read-add-write must be one atomic
    # operation.
    if i < size:
        cuda.atomic.add(block_hist, a[i], 1)
    cuda.syncthreads()

    # Merge: one thread per bin adds the block's count
    # into the global histogram. Every block adds into
    # the same BINS cells of `out`, so this is atomic
    # too.
    if t < BINS:
        cuda.atomic.add(out, t, block_hist[t])
