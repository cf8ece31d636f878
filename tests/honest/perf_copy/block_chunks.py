from numba import cuda

TPB = 64
CHUNK = 4


@cuda.jit
def kernel(out, a, size):
    # Each block copies its own TPB * CHUNK stretch, one block-wide row at a time.
    base = cuda.blockIdx.x * TPB * CHUNK + cuda.threadIdx.x
    for c in range(CHUNK):
        k = base + c * TPB
        if k < size:
            out[k] = a[k]
