from numba import cuda

TPB = 64
CHUNK = 4


@cuda.jit
def kernel(out, a, size):
    # Each warp owns 32 * CHUNK neighbouring elements and sweeps them 32 at a time.
    i = cuda.grid(1)
    lane = i % 32
    base = (i // 32) * 32 * CHUNK
    for c in range(CHUNK):
        k = base + c * 32 + lane
        if k < size:
            out[k] = a[k]
