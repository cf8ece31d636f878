import numba
from numba import cuda

TPB = 256   # threads per block: 8 warps


@cuda.jit
def kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    value = numba.float32(0)
    if i < size:
        value = a[i]
    cache[t] = value
    cuda.syncthreads()

    # Correct, but the working threads are scattered:
    # at each step only every (2 * s)-th thread works,
    # so most lanes of every warp sit idle.
    # FILL ME IN (about 6 lines): keep the working
    # threads side by side.
    s = 1
    while s < TPB:
        if t % (2 * s) == 0:
            cache[t] += cache[t + s]
        cuda.syncthreads()
        s *= 2

    if t == 0:
        out[cuda.blockIdx.x] = cache[0]
