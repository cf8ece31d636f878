import numba
from numba import cuda

TPB = 256
WARP = 32
WARPS = 8
FULL_MASK = 0xffffffff


@cuda.jit
def kernel(out, a, size):
    partial = cuda.shared.array(WARPS, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    lane = t % WARP
    warp = t // WARP
    v = a[i] if i < size else numba.float32(0)
    for off in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(FULL_MASK, v, off)
    if lane == 0:
        partial[warp] = v
    cuda.syncthreads()
    if warp == 0:
        v = partial[lane] if lane < WARPS else numba.float32(0)
        for off in (4, 2, 1):
            v += cuda.shfl_down_sync(FULL_MASK, v, off)
        if lane == 0:
            out[cuda.blockIdx.x] = v
