import numba
from numba import cuda

TPB = 8
MAX_CONV = 4
TPB_MAX_CONV = 12


@cuda.jit
def kernel(out, a, b, a_size, b_size):
    # The block's TPB elements of a, followed by the
    # halo after them.
    a_shared = cuda.shared.array(TPB_MAX_CONV,
                                 numba.float32)
    # The whole of b (at most MAX_CONV elements).
    b_shared = cuda.shared.array(MAX_CONV,
                                 numba.float32)
    i = cuda.grid(1)
    local_i = cuda.threadIdx.x

    # 1. Every thread loads its own element of a
    #    (first global read). Anything past the end
    #    of a becomes 0 and adds nothing later.
    if i < a_size:
        a_shared[local_i] = a[i]
    else:
        a_shared[local_i] = 0

    # 2. Second global read, split between two groups
    #    of threads (this works because
    #    TPB >= 2 * MAX_CONV):
    #    the last MAX_CONV threads load the halo, the
    #    MAX_CONV elements just after this block,
    #    which the next block also loads;
    if local_i >= TPB - MAX_CONV:
        halo = i + MAX_CONV
        if halo < a_size:
            a_shared[local_i + MAX_CONV] = a[halo]
        else:
            a_shared[local_i + MAX_CONV] = 0
    #    the first MAX_CONV threads load b
    #    (0 past b_size).
    if local_i < MAX_CONV:
        if local_i < b_size:
            b_shared[local_i] = b[local_i]
        else:
            b_shared[local_i] = 0

    # After this barrier both shared arrays are full.
    cuda.syncthreads()

    # 3. Slide b over the window starting at this
    #    thread's element. local_i + j is at most
    #    (TPB - 1) + (MAX_CONV - 1), inside a_shared.
    if i < a_size:
        total = numba.float32(0)
        for j in range(b_size):
            total += (a_shared[local_i + j]
                      * b_shared[j])
        out[i] = total
