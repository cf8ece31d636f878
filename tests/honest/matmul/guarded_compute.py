import numba
from numba import cuda

TPB = 3


@cuda.jit
def kernel(out, a, b, size):
    a_shared = cuda.shared.array((TPB, TPB), numba.float32)
    b_shared = cuda.shared.array((TPB, TPB), numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    local_i = cuda.threadIdx.x
    local_j = cuda.threadIdx.y
    acc = 0
    for k in range(0, size, TPB):
        if i < size and k + local_j < size:
            a_shared[local_i, local_j] = a[i, k + local_j]
        if j < size and k + local_i < size:
            b_shared[local_i, local_j] = b[k + local_i, j]
        cuda.syncthreads()
        if i < size and j < size:
            for local_k in range(min(TPB, size - k)):
                acc += a_shared[local_i, local_k] * b_shared[local_k, local_j]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = acc
