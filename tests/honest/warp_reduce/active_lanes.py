import numba
from numba import cuda

WARP = 32
FULL_MASK = 0xffffffff


@cuda.jit
def kernel(out, a, size):
    # Every lane takes part; lanes past the end bring 0. The loop is a for over the offsets.
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % WARP
    total = numba.float32(0)
    if i < size:
        total += a[i]
    for step in range(5):
        total += cuda.shfl_down_sync(FULL_MASK, total, 16 >> step)
    if lane == 0:
        out[i // WARP] = total
