import numba
from numba import cuda

TPB = 8
ELEMS = 16


@cuda.jit
def kernel(out, a, size):
    tree = cuda.shared.array(ELEMS, numba.float32)
    t = cuda.threadIdx.x
    for k in range(2):
        idx = t + k * TPB
        tree[idx] = a[idx] if idx < size else 0
    cuda.syncthreads()
    # Up-sweep with a for loop over the levels.
    for level in range(4):
        stride = 1 << level
        right = (t + 1) * 2 * stride - 1
        if right < ELEMS:
            tree[right] += tree[right - stride]
        cuda.syncthreads()
    if t == 0:
        tree[ELEMS - 1] = 0
    cuda.syncthreads()
    for level in range(3, -1, -1):
        stride = 1 << level
        right = (t + 1) * 2 * stride - 1
        if right < ELEMS:
            left_sum = tree[right - stride]
            tree[right - stride] = tree[right]
            tree[right] = tree[right] + left_sum
        cuda.syncthreads()
    for k in range(2):
        idx = t + k * TPB
        if idx < size:
            out[idx] = tree[idx]
