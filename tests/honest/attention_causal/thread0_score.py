import math

import numba
from numba import cuda

D = 8


@cuda.jit
def kernel(out, q, k, v, size):
    # Thread 0 computes each score and hands it to the block through shared memory.
    q_row = cuda.shared.array(D, numba.float32)
    k_row = cuda.shared.array(D, numba.float32)
    i = cuda.blockIdx.x
    d = cuda.threadIdx.x
    q_row[d] = q[i, d]
    running_max = -math.inf
    running_sum = 0.0
    acc = 0.0
    for j in range(i + 1):
        k_row[d] = k[j, d]
        cuda.syncthreads()
        if d == 0:
            s = 0.0
            for e in range(D):
                s += q_row[e] * k_row[e]
            k_row[0] = s / math.sqrt(D)
        cuda.syncthreads()
        score = k_row[0]
        cuda.syncthreads()
        new_max = max(running_max, score)
        c = math.exp(running_max - new_max)
        w = math.exp(score - new_max)
        running_sum = running_sum * c + w
        acc = acc * c + w * v[j, d]
        running_max = new_max
    out[i, d] = acc / running_sum
