from numba import cuda
import numba
import math

D = 8


@cuda.jit
def kernel(out, q, k, v, size):
    i = cuda.blockIdx.x   # this block's query row
    d = cuda.threadIdx.x  # this thread's output column
    q_row = cuda.shared.array(D, numba.float32)
    k_row = cuda.shared.array(D, numba.float32)

    # The query row, one element per thread; the
    # first barrier in the loop publishes it.
    q_row[d] = q[i, d]
    scale = 1.0 / math.sqrt(D)

    # Online softmax state: the largest score so far,
    # the sum of exp(score - running_max), and this
    # thread's column of the weighted sum of v rows,
    # on the same scale.
    running_max = -math.inf
    running_sum = 0.0
    acc = 0.0

    # Causal: query i sees keys 0..i only. The trip
    # count is the same for the whole block, so the
    # barriers inside the loop are reached by every
    # thread.
    for j in range(i + 1):
        k_row[d] = k[j, d]
        cuda.syncthreads()

        # Every thread computes the same score from
        # shared memory: D multiply-adds, cheaper than
        # a reduction and a broadcast at this size.
        score = 0.0
        for e in range(D):
            score += q_row[e] * k_row[e]
        score *= scale
        # Everyone has finished reading k_row before
        # the next key overwrites it.
        cuda.syncthreads()

        # If the max grew, rescale what has been summed
        # so far; exp(-inf) = 0 on the first key.
        new_max = max(running_max, score)
        correction = math.exp(running_max - new_max)
        weight = math.exp(score - new_max)
        running_sum = running_sum * correction + weight
        acc = acc * correction + weight * v[j, d]
        running_max = new_max

    out[i, d] = acc / running_sum
