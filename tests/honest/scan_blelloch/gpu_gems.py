import numba
from numba import cuda

TPB = 8
ELEMS = 16


@cuda.jit
def kernel(out, a, size):
    # The GPU Gems 3 (chapter 39) layout: offset doubles on the way up, halves on the way down.
    temp = cuda.shared.array(ELEMS, numba.float32)
    t = cuda.threadIdx.x
    temp[t] = a[t] if t < size else 0
    temp[t + TPB] = a[t + TPB] if t + TPB < size else 0
    offset = 1
    d = ELEMS >> 1
    while d > 0:
        cuda.syncthreads()
        if t < d:
            ai = offset * (2 * t + 1) - 1
            bi = offset * (2 * t + 2) - 1
            temp[bi] += temp[ai]
        offset *= 2
        d >>= 1
    if t == 0:
        temp[ELEMS - 1] = 0
    d = 1
    while d < ELEMS:
        offset >>= 1
        cuda.syncthreads()
        if t < d:
            ai = offset * (2 * t + 1) - 1
            bi = offset * (2 * t + 2) - 1
            v = temp[ai]
            temp[ai] = temp[bi]
            temp[bi] += v
        d *= 2
    cuda.syncthreads()
    if t < size:
        out[t] = temp[t]
    if t + TPB < size:
        out[t + TPB] = temp[t + TPB]
