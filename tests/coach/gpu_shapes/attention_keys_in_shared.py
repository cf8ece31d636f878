"""The keys of a whole head in dynamic shared memory, read once per block: right, and within a
block's 48 KiB at every simulator shape (36 KB at the largest drawn, S 127 x D 72), but a GPU refuses
the launch at its own shapes (131 KB at (1, 2, 257, 128)). It passed the simulator's verification
until the verifier planned launch() at the GPU's shapes (verify._Judge.gpu_shapes)."""

import math

import numba
from numba import cuda

TPB = 128
D_MAX = 128          # the largest head dimension supported (size of the per-thread output row)
NEG_BIG = -3.0e38    # finite stand-in for -inf


@cuda.jit
def attention_keys_shared(out, q, k, v, nh, s, d):
    # One block per (b, h) and 128 queries; the head's keys are read from global memory once per
    # block into dynamic shared memory (s x d floats), then every query reads them from there.
    keys = cuda.shared.array(0, numba.float32)
    bh = cuda.blockIdx.x
    b = bh // nh
    h = bh % nh
    t = cuda.threadIdx.x
    e = t
    while e < s * d:
        keys[e] = k[b, h, e // d, e % d]
        e += TPB
    cuda.syncthreads()
    qi = cuda.blockIdx.y * TPB + t
    if qi < s:
        scale = numba.float32(1.0) / math.sqrt(numba.float32(d))
        acc = cuda.local.array(D_MAX, numba.float32)
        for c in range(d):
            acc[c] = numba.float32(0)
        m = numba.float32(NEG_BIG)
        for j in range(s):
            sc = numba.float32(0)
            for c in range(d):
                sc += q[b, h, qi, c] * keys[j * d + c]
            sc *= scale
            if sc > m:
                m = sc
        total = numba.float32(0)
        for j in range(s):
            sc = numba.float32(0)
            for c in range(d):
                sc += q[b, h, qi, c] * keys[j * d + c]
            sc *= scale
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
    attention_keys_shared[(nb * nh, (s + TPB - 1) // TPB), TPB, 0, s * d * 4](out, q, k, v, nh, s, d)
