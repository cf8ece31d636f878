from numba import cuda

TPB = 64     # threads per block: two warps
CHUNK = 4    # elements each thread copies


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    # Correct, but slow: thread i copies the CHUNK
    # elements from i * CHUNK on, so the 32 lanes of
    # a warp touch addresses CHUNK elements apart.
    # FILL ME IN (about 4 lines): make neighbouring
    # lanes copy neighbouring elements instead.
    start = i * CHUNK
    for c in range(CHUNK):
        k = start + c
        if k < size:
            out[k] = a[k]
