import numba
from numba import cuda

WARP = 32
FULL_MASK = 0xffffffff


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    val = numba.float32(0)
    if i < size:
        val = a[i]
    offset = WARP // 2
    while offset > 0:
        val += cuda.shfl_down_sync(FULL_MASK, val, offset)
        offset //= 2
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = val
