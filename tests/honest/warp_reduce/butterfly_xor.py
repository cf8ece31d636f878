import numba
from numba import cuda

WARP = 32
FULL_MASK = 0xffffffff


@cuda.jit
def kernel(out, a, size):
    # Butterfly: after the xor steps every lane holds the warp's total.
    i = cuda.grid(1)
    val = a[i] if i < size else numba.float32(0)
    mask = 16
    while mask >= 1:
        val += cuda.shfl_xor_sync(FULL_MASK, val, mask)
        mask //= 2
    if cuda.laneid == 0:
        out[cuda.blockIdx.x] = val
