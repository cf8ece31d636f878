from numba import cuda

TPB = 64
CHUNK = 4


@cuda.jit
def kernel(out, a, size):
    # Numba reads a float32 array one float per lane (no float2 or float4 load), so the nearest
    # thing to a vector load is two coalesced loads in flight per thread: a grid-stride loop
    # unrolled by two. Even passes are the first load's, odd passes the second's, so no sector
    # is split between the two.
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    k = i
    while k < size:
        first = a[k]
        if k + stride < size:
            second = a[k + stride]
            out[k + stride] = second
        out[k] = first
        k += 2 * stride
