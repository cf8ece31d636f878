import numba
from numba import cuda

TPB = 8
ELEMS = 16


@cuda.jit
def kernel(out, a, size):
    # Each thread loads and stores the pair 2t, 2t + 1.
    tree = cuda.shared.array(ELEMS, numba.float32)
    t = cuda.threadIdx.x
    lo = 2 * t
    hi = 2 * t + 1
    if lo < size:
        tree[lo] = a[lo]
    else:
        tree[lo] = 0
    if hi < size:
        tree[hi] = a[hi]
    else:
        tree[hi] = 0
    cuda.syncthreads()
    stride = 1
    while stride < ELEMS:
        right = (t + 1) * 2 * stride - 1
        if right < ELEMS:
            tree[right] += tree[right - stride]
        cuda.syncthreads()
        stride *= 2
    if t == TPB - 1:
        tree[ELEMS - 1] = 0
    cuda.syncthreads()
    stride = ELEMS // 2
    while stride >= 1:
        right = (t + 1) * 2 * stride - 1
        if right < ELEMS:
            left = tree[right - stride]
            tree[right - stride] = tree[right]
            tree[right] += left
        cuda.syncthreads()
        stride //= 2
    if lo < size:
        out[lo] = tree[lo]
    if hi < size:
        out[hi] = tree[hi]
