import numba
from numba import cuda

TPB = 256
WARP = 32
WARPS = 8
FULL_MASK = 0xffffffff


@cuda.jit(device=True)
def warp_sum(v):
    off = WARP // 2
    while off > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, off)
        off //= 2
    return v


@cuda.jit
def kernel(out, a, size):
    # A device helper for the warp sum; one atomic per block at the end (out starts at zero).
    warp_sums = cuda.shared.array(WARPS, numba.float32)
    i = cuda.grid(1)
    lane = cuda.laneid
    warp = cuda.threadIdx.x // WARP
    v = numba.float32(0)
    if i < size:
        v = a[i]
    v = warp_sum(v)
    if lane == 0:
        warp_sums[warp] = v
    cuda.syncthreads()
    if warp == 0:
        v = numba.float32(0)
        if lane < WARPS:
            v = warp_sums[lane]
        v = warp_sum(v)
        if lane == 0:
            cuda.atomic.add(out, cuda.blockIdx.x, v)
