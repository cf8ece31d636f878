import numba
from numba import cuda

TPB = 16


@cuda.jit
def kernel(out, a, size):
    # One slot per thread. After the scan, slot i
    # holds a[0] + ... + a[i].
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x

    # The only global read: this thread's element.
    # Threads past the end hold 0, which leaves every
    # sum unchanged.
    if i < size:
        cache[i] = a[i]
    else:
        cache[i] = 0
    cuda.syncthreads()

    # Doubling steps with offset 1, 2, 4, 8. Before a
    # step, slot i holds the sum of the `offset`
    # elements ending at i; adding the slot `offset`
    # to its left doubles that.
    offset = 1
    while offset < TPB:
        # Read phase: fetch the partner's value into a
        # register while nobody writes.
        partner = numba.float32(0)
        if i >= offset:
            partner = cache[i - offset]
        cuda.syncthreads()
        # Write phase: each thread changes only its own
        # slot, and nobody reads others.
        cache[i] += partner
        cuda.syncthreads()
        offset *= 2

    # The only global write: this thread's finished
    # running total.
    if i < size:
        out[i] = cache[i]
