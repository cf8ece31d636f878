import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, b, size):
    # Written as if for many blocks: each block folds its products, then its thread 0 adds the
    # block's total into out[0] with one atomic.
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if i < size:
        cache[t] = a[i] * b[i]
    else:
        cache[t] = 0
    cuda.syncthreads()
    if t == 0:
        s = numba.float32(0)
        for k in range(cuda.blockDim.x):
            s += cache[k]
        cuda.atomic.add(out, 0, s)
