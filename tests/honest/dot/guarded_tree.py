import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, b, size):
    # Only the valid cells are written and folded: a pair is added only when both halves exist.
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if i < size:
        cache[t] = a[i] * b[i]
    cuda.syncthreads()
    stride = 1
    while stride < TPB:
        if t % (2 * stride) == 0 and t + stride < size:
            cache[t] += cache[t + stride]
        cuda.syncthreads()
        stride *= 2
    if t == 0:
        out[0] = cache[0]
