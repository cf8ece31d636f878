import numba
from numba import cuda

TPB = 3


@cuda.jit
def kernel(out, a, b, size):
    # Two TPB x TPB tiles: one square of a and one
    # square of b at a time.
    a_tile = cuda.shared.array((TPB, TPB),
                               numba.float32)
    b_tile = cuda.shared.array((TPB, TPB),
                               numba.float32)
    # The output cell this thread owns.
    i, j = cuda.grid(2)
    # Its position inside the block.
    local_i = cuda.threadIdx.x
    local_j = cuda.threadIdx.y

    total = numba.float32(0)
    # Walk along the shared dimension k one tile
    # (TPB columns of a, TPB rows of b) at a time.
    # Every thread runs the same number of iterations,
    # so every thread reaches every barrier below.
    n_tiles = (size + TPB - 1) // TPB
    for t in range(n_tiles):
        start = t * TPB

        # Each thread copies one cell of a and one
        # cell of b (two global reads per tile).
        # Cells outside the matrix become 0, which
        # adds nothing to the sum and leaves no tile
        # cell unwritten.
        if i < size and start + local_j < size:
            a_tile[local_i, local_j] = (
                a[i, start + local_j])
        else:
            a_tile[local_i, local_j] = 0
        if start + local_i < size and j < size:
            b_tile[local_i, local_j] = (
                b[start + local_i, j])
        else:
            b_tile[local_i, local_j] = 0

        # Wait until both tiles are complete.
        cuda.syncthreads()

        # Row local_i of a_tile times column local_j
        # of b_tile.
        for k in range(TPB):
            total += (a_tile[local_i, k]
                      * b_tile[k, local_j])

        # Wait until everybody is done with the tiles
        # before the next iteration overwrites them.
        cuda.syncthreads()

    # Threads outside the matrix still helped load
    # tiles; only the others own an output cell.
    if i < size and j < size:
        out[i, j] = total
