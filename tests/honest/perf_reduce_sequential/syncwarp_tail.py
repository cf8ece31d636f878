import numba
from numba import cuda

TPB = 256
WARP = 32


@cuda.jit
def kernel(out, a, size):
    # Block barriers while several warps work; once the live range fits in warp 0, that warp
    # finishes alone with warp barriers.
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    v = numba.float32(0)
    if i < size:
        v = a[i]
    cache[t] = v
    cuda.syncthreads()
    s = TPB // 2
    while s >= WARP:
        if t < s:
            cache[t] += cache[t + s]
        cuda.syncthreads()
        s //= 2
    if t < WARP:
        while s > 0:
            if t < s:
                cache[t] += cache[t + s]
            cuda.syncwarp()
            s //= 2
        if t == 0:
            out[cuda.blockIdx.x] = cache[0]
