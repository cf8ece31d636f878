import numba
from numba import cuda

TPB = 8      # threads in the block
ELEMS = 16   # elements the block scans: two per thread


@cuda.jit
def kernel(out, a, size):
    # The tree lives in place in one shared array of
    # ELEMS slots.
    tree = cuda.shared.array(ELEMS, numba.float32)
    t = cuda.threadIdx.x

    # Load two elements per thread, TPB apart, so
    # that neighbouring threads read neighbouring
    # addresses. Slots past the end hold 0, which
    # changes no sum.
    lo = t
    hi = t + TPB
    if lo < size:
        tree[lo] = a[lo]
    else:
        tree[lo] = 0
    if hi < size:
        tree[hi] = a[hi]
    else:
        tree[hi] = 0
    cuda.syncthreads()

    # Up-sweep (a reduction that keeps its partial
    # sums): at each level thread t owns one pair of
    # slots `stride` apart, and the right slot
    # absorbs the left one. Levels use 8, 4, 2, then
    # 1 threads; the idle ones still reach the
    # barrier.
    stride = 1
    while stride < ELEMS:
        right = (t + 1) * 2 * stride - 1
        if right < ELEMS:
            tree[right] += tree[right - stride]
        cuda.syncthreads()
        stride *= 2

    # The last slot holds the grand total. An
    # exclusive scan starts from 0 instead.
    if t == 0:
        tree[ELEMS - 1] = 0
    cuda.syncthreads()

    # Down-sweep: walk back down the same pairs. The
    # right slot holds the sum of everything before
    # the pair; the left child inherits it, and the
    # right child also adds the left child's partial
    # sum from the up-sweep.
    stride = ELEMS // 2
    while stride > 0:
        right = (t + 1) * 2 * stride - 1
        if right < ELEMS:
            left_sum = tree[right - stride]
            tree[right - stride] = tree[right]
            tree[right] += left_sum
        cuda.syncthreads()
        stride //= 2

    # Store the same two positions this thread loaded.
    if lo < size:
        out[lo] = tree[lo]
    if hi < size:
        out[hi] = tree[hi]
