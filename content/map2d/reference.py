from numba import cuda


@cuda.jit
def kernel(out, a, size):
    # In a 2D block a thread has an x and a y number.
    # Convention: x picks the row (first index),
    # y picks the column (second index).
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    # The block is 3x3 but the array may be smaller:
    # guard both directions.
    if i < size and j < size:
        out[i, j] = a[i, j] + 10
