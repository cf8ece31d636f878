import math

import numba
from numba import cuda

TPB = 128
D_MAX = 128          # the largest head dimension supported (size of the per-thread rows)
NEG_BIG = -3.0e38    # finite stand-in for -inf


@cuda.jit
def attention_rows(out, q, k, v, nb, nh, s, d):
    # One thread per (b, h, query) row, as before, but one pass over the keys instead of two:
    # the running maximum m and sum l are kept as the keys go by, and when a larger score comes,
    # everything summed so far is rescaled by exp(old m - new m) (the "online softmax"). Each
    # score q . k is computed once instead of twice.
    r = cuda.grid(1)
    if r < nb * nh * s:
        qi = r % s
        h = (r // s) % nh
        b = r // (s * nh)
        scale = numba.float32(1.0) / math.sqrt(numba.float32(d))
        slope = numba.float32(math.pow(2.0, -8.0 * (h + 1) / nh))
        acc = cuda.local.array(D_MAX, numba.float32)
        for c in range(d):
            acc[c] = numba.float32(0)
        m = numba.float32(NEG_BIG)
        total = numba.float32(0)
        for j in range(qi + 1):
            sc = numba.float32(0)
            for c in range(d):
                sc += q[b, h, qi, c] * k[b, h, j, c]
            sc *= scale
            sc += slope * numba.float32(j - qi)
            if sc > m:
                corr = math.exp(m - sc)
                total *= corr
                for c in range(d):
                    acc[c] *= corr
                m = sc
            p = math.exp(sc - m)
            total += p
            for c in range(d):
                acc[c] += p * v[b, h, j, c]
        inv = numba.float32(1) / total
        for c in range(d):
            out[b, h, qi, c] = acc[c] * inv


def launch(out, q, k, v):
    nb = q.shape[0]
    nh = q.shape[1]
    s = q.shape[2]
    d = q.shape[3]
    attention_rows[(nb * nh * s + TPB - 1) // TPB, TPB](out, q, k, v, nb, nh, s, d)
