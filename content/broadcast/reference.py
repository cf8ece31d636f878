from numba import cuda


@cuda.jit
def kernel(out, a, b, size):
    # x picks the row (first index),
    # y picks the column (second index).
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    if i < size and j < size:
        # `a` is a column: it only has column 0,
        # shared by every cell of row i.
        # `b` is a row: it only has row 0,
        # shared by every cell of column j.
        out[i, j] = a[i, 0] + b[0, j]
