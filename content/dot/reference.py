import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, b, size):
    # One slot per thread; every thread of the block
    # can see all of them.
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    local_i = cuda.threadIdx.x

    # Step 1: each thread computes its own product
    # (two global reads). Threads past the end
    # store 0, so every slot holds a real number.
    if i < size:
        cache[local_i] = a[i] * b[i]
    else:
        cache[local_i] = 0

    # Nobody may read the slots until everybody has
    # written theirs.
    cuda.syncthreads()

    # Step 2: one thread folds the products into a
    # single total and writes the only output cell
    # (one global write).
    if local_i == 0:
        total = numba.float32(0)
        for k in range(TPB):
            total += cache[k]
        out[0] = total
