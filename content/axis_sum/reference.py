import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y      # one block per row
    col = cuda.threadIdx.x     # one thread per column

    # Load this row into the block's shared memory;
    # missing columns are 0.
    if col < size:
        cache[col] = a[row, col]
    else:
        cache[col] = 0
    cuda.syncthreads()

    # Tree reduction along the row, exactly as for a
    # 1D block sum.
    stride = TPB // 2
    while stride > 0:
        if col < stride:
            cache[col] += cache[col + stride]
        cuda.syncthreads()
        stride //= 2

    # One writer per row.
    if col == 0:
        out[row, 0] = cache[0]
