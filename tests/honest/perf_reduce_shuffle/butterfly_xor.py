import numba
from numba import cuda

TPB = 256
WARP = 32
WARPS = 8
FULL_MASK = 0xffffffff


@cuda.jit
def kernel(out, a, size):
    # Xor butterflies: every lane ends with the total, lane 0 uses it.
    sums = cuda.shared.array(WARPS, numba.float32)
    i = cuda.grid(1)
    lane = cuda.laneid
    warp = cuda.threadIdx.x // WARP
    total = numba.float32(0)
    if i < size:
        total = a[i]
    mask = WARP // 2
    while mask > 0:
        total += cuda.shfl_xor_sync(FULL_MASK, total, mask)
        mask //= 2
    if lane == 0:
        sums[warp] = total
    cuda.syncthreads()
    if warp == 0:
        total = numba.float32(0)
        if lane < WARPS:
            total = sums[lane]
        mask = WARPS // 2
        while mask > 0:
            total += cuda.shfl_xor_sync(FULL_MASK, total, mask)
            mask //= 2
        if lane == 0:
            out[cuda.blockIdx.x] = total
