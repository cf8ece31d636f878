import numba
from numba import cuda

TPB = 8
MAX_CONV = 4
TPB_MAX_CONV = 12


@cuda.jit
def kernel(out, a, b, a_size, b_size):
    # Only the cells that will be used are loaded: thread t < b_size - 1 loads halo cell t,
    # thread t >= TPB - b_size loads b.
    sa = cuda.shared.array(TPB_MAX_CONV, numba.float32)
    sb = cuda.shared.array(MAX_CONV, numba.float32)
    start = cuda.blockIdx.x * cuda.blockDim.x
    t = cuda.threadIdx.x
    i = start + t
    if i < a_size:
        sa[t] = a[i]
    if t < b_size - 1 and start + TPB + t < a_size:
        sa[TPB + t] = a[start + TPB + t]
    if t >= TPB - b_size:
        sb[t - (TPB - b_size)] = b[t - (TPB - b_size)]
    cuda.syncthreads()
    if i < a_size:
        acc = numba.float32(0)
        last = min(b_size, a_size - i)
        for j in range(last):
            acc += sa[t + j] * sb[j]
        out[i] = acc
