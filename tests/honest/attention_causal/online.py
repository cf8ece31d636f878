import math

import numba
from numba import cuda

D = 8


@cuda.jit
def kernel(out, q, k, v, size):
    qs = cuda.shared.array(D, numba.float32)
    ks = cuda.shared.array(D, numba.float32)
    row = cuda.blockIdx.x
    d = cuda.threadIdx.x
    qs[d] = q[row, d]
    m = -math.inf
    l = 0.0
    acc = 0.0
    for j in range(row + 1):
        ks[d] = k[j, d]
        cuda.syncthreads()
        s = 0.0
        for e in range(D):
            s += qs[e] * ks[e]
        s = s / math.sqrt(D)
        cuda.syncthreads()
        m_new = max(m, s)
        alpha = math.exp(m - m_new)
        p = math.exp(s - m_new)
        l = l * alpha + p
        acc = acc * alpha + p * v[j, d]
        m = m_new
    out[row, d] = acc / l
