import numba
from numba import cuda

TPB = 8
MAX_CONV = 4
TPB_MAX_CONV = 12


@cuda.jit
def kernel(out, a, b, a_size, b_size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    shared_a = cuda.shared.array(TPB_MAX_CONV, numba.float32)
    shared_b = cuda.shared.array(MAX_CONV, numba.float32)
    if i < a_size:
        shared_a[local_i] = a[i]
    if local_i < b_size:
        shared_b[local_i] = b[local_i]
    else:
        # The next threads load the halo: the b_size - 1 elements after this block.
        local_i2 = local_i - b_size
        i2 = i - b_size
        if i2 + TPB < a_size and local_i2 < b_size:
            shared_a[TPB + local_i2] = a[i2 + TPB]
    cuda.syncthreads()
    acc = 0
    for k in range(b_size):
        if i + k < a_size:
            acc += shared_a[local_i + k] * shared_b[k]
    if i < a_size:
        out[i] = acc
