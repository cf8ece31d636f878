import math

import numba
from numba import cuda

D = 8


@cuda.jit
def kernel(out, q, k, v, size):
    # Thread d keeps q[i, d] in a register; each key's score is the sum of the D products,
    # which the threads leave in shared memory.
    prod = cuda.shared.array(D, numba.float32)
    i = cuda.blockIdx.x
    d = cuda.threadIdx.x
    qd = q[i, d]
    scale = 1.0 / math.sqrt(D)
    best = -math.inf
    denom = 0.0
    acc = 0.0
    for j in range(i + 1):
        prod[d] = qd * k[j, d]
        cuda.syncthreads()
        score = 0.0
        for e in range(D):
            score += prod[e]
        score *= scale
        cuda.syncthreads()
        if score > best:
            shrink = math.exp(best - score)
            denom = denom * shrink + 1.0
            acc = acc * shrink + v[j, d]
            best = score
        else:
            w = math.exp(score - best)
            denom += w
            acc += w * v[j, d]
    out[i, d] = acc / denom
