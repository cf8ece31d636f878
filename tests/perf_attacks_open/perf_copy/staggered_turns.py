"""Grid-stride ownership, issued in turns: in each pass of the loop only the lanes whose turn it is
(a quarter of each warp) copy. On a GPU each of those passes is its own instruction of 8 lanes
spread over 32 floats: 4 sectors for 8 elements, 25% efficiency, the starter's. The simulator groups
each lane's k-th run of the line, whatever pass it ran in, into one 32-lane coalesced request."""

from numba import cuda

TPB = 64
CHUNK = 4


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    turn = cuda.threadIdx.x % 4
    k = i
    for c in range(4 * CHUNK):
        if c % 4 == turn:
            if k < size:
                out[k] = a[k]
            k += stride
