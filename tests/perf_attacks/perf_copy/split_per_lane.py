"""The starter's strided addressing (lanes CHUNK elements apart), each lane's copy on a line of its own:
every request holds one lane, one sector, so a per-request ratio calls it ideal. A warp still
pulls 16 sectors for 32 floats per pass, as the starter does."""

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
            if lane == 0:
                out[k] = a[k]
            if lane == 1:
                out[k] = a[k]
            if lane == 2:
                out[k] = a[k]
            if lane == 3:
                out[k] = a[k]
            if lane == 4:
                out[k] = a[k]
            if lane == 5:
                out[k] = a[k]
            if lane == 6:
                out[k] = a[k]
            if lane == 7:
                out[k] = a[k]
            if lane == 8:
                out[k] = a[k]
            if lane == 9:
                out[k] = a[k]
            if lane == 10:
                out[k] = a[k]
            if lane == 11:
                out[k] = a[k]
            if lane == 12:
                out[k] = a[k]
            if lane == 13:
                out[k] = a[k]
            if lane == 14:
                out[k] = a[k]
            if lane == 15:
                out[k] = a[k]
            if lane == 16:
                out[k] = a[k]
            if lane == 17:
                out[k] = a[k]
            if lane == 18:
                out[k] = a[k]
            if lane == 19:
                out[k] = a[k]
            if lane == 20:
                out[k] = a[k]
            if lane == 21:
                out[k] = a[k]
            if lane == 22:
                out[k] = a[k]
            if lane == 23:
                out[k] = a[k]
            if lane == 24:
                out[k] = a[k]
            if lane == 25:
                out[k] = a[k]
            if lane == 26:
                out[k] = a[k]
            if lane == 27:
                out[k] = a[k]
            if lane == 28:
                out[k] = a[k]
            if lane == 29:
                out[k] = a[k]
            if lane == 30:
                out[k] = a[k]
            if lane == 31:
                out[k] = a[k]
