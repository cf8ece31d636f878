import numba
from numba import cuda

TPB = 256


@cuda.jit
def kernel(out, a, size):
    # The tree the other way round: at each step the upper half of the live range, threads
    # s .. 2s - 1, side by side, add their cell into the one s below.
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    v = numba.float32(0)
    if i < size:
        v = a[i]
    cache[t] = v
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if t >= s and t < 2 * s:
            cache[t - s] += cache[t]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]
