import numba
from numba import cuda

TPB = 256   # threads per block: 8 warps


@cuda.jit
def kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)

    # One value per thread into the block's cache;
    # threads past the end add a 0, so every block
    # runs the same tree.
    value = numba.float32(0)
    if i < size:
        value = a[i]
    cache[t] = value
    cuda.syncthreads()

    # Sequential addressing: at each step the lower
    # half of the live range adds in the upper half,
    # s cells away. The working threads are always
    # 0 .. s - 1, side by side, so whole warps work
    # or whole warps skip the `if`: a warp only idles
    # lanes once s is below 32. Lane t touches cells
    # t and t + s, 32 neighbouring words for a warp:
    # 32 different banks, no conflict.
    s = TPB // 2
    while s > 0:
        if t < s:
            cache[t] += cache[t + s]
        # Every thread reaches the barrier, working or
        # not: the next step reads what this one wrote.
        cuda.syncthreads()
        s //= 2

    # The block's total is in cell 0.
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]
