import numba
from numba import cuda

TPB = 256
WARP = 32
WARPS = 8
FULL_MASK = 0xffffffff


@cuda.jit
def kernel(out, a, size):
    # The shuffle ladders written out, no loops.
    totals = cuda.shared.array(WARPS, numba.float32)
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % WARP
    warp = cuda.threadIdx.x // WARP
    v = numba.float32(0)
    if i < size:
        v = a[i]
    v += cuda.shfl_down_sync(FULL_MASK, v, 16)
    v += cuda.shfl_down_sync(FULL_MASK, v, 8)
    v += cuda.shfl_down_sync(FULL_MASK, v, 4)
    v += cuda.shfl_down_sync(FULL_MASK, v, 2)
    v += cuda.shfl_down_sync(FULL_MASK, v, 1)
    if lane == 0:
        totals[warp] = v
    cuda.syncthreads()
    if warp == 0:
        v = numba.float32(0)
        if lane < WARPS:
            v = totals[lane]
        v += cuda.shfl_down_sync(FULL_MASK, v, 4)
        v += cuda.shfl_down_sync(FULL_MASK, v, 2)
        v += cuda.shfl_down_sync(FULL_MASK, v, 1)
        if lane == 0:
            out[cuda.blockIdx.x] = v
