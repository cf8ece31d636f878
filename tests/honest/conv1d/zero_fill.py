import numba
from numba import cuda

TPB = 8
MAX_CONV = 4
TPB_MAX_CONV = 12


@cuda.jit
def kernel(out, a, b, a_size, b_size):
    window = cuda.shared.array(TPB_MAX_CONV, numba.float32)
    weights = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    window[t] = a[i] if i < a_size else 0
    if t < MAX_CONV:
        # The first MAX_CONV threads load b, the last MAX_CONV the halo.
        weights[t] = b[t] if t < b_size else 0
    else:
        h = cuda.blockIdx.x * TPB + TPB + (t - MAX_CONV)
        window[TPB + t - MAX_CONV] = a[h] if h < a_size else 0
    cuda.syncthreads()
    if i < a_size:
        acc = numba.float32(0)
        for j in range(MAX_CONV):
            acc += window[t + j] * weights[j]
        out[i] = acc
