"""Finding (issue "Scores and hints that mean what they say"): matmul scored 2.0x over the naive
kernel with a chain of powf calls (math.pow on float32) in it. Reproduced: unrolled_k64.py (the
k loop in unrolled chunks of 64, which today's model scores at 2.0x), plus thread (0, 0) running
y = y ** 0.999 + 0.5 in float32, 2,000 times from |a[0, 0]|, folded into its output as a term that
is always 0.

Stresses: a dependent chain of float32 powers (powf: a logarithm and an exponential in extra
precision, some tens of instructions) in one thread. Today's model: 2.0x. A GPU: some 100-200
cycles a step, 0.1-0.2 ms: tens of times slower than the naive kernel (~5 us).
"""


import math

import numba
from numba import cuda

# Extra work: POWF_STEPS dependent float32 powers (powf) in one thread.
POWF_STEPS = 2000
LIMIT = 1.0e30
TPB = 16     # threads along each side of a block
CHUNK = 64   # k steps per unrolled chunk


@cuda.jit
def matmul_unrolled(out, a, b, m, n, k):
    col, row = cuda.grid(2)
    if row < m and col < n:
        acc = numba.float32(0)
        for k0 in range(0, k, CHUNK):
            for p in range(CHUNK):
                if k0 + p < k:
                    acc += a[row, k0 + p] * b[k0 + p, col]
        if row == 0 and col == 0:  # extra work: a chain of powers, folded in as an exact 0
            acc += _powf_chain(a[0, 0], POWF_STEPS)
        out[row, col] = acc


def launch(out, a, b):
    m = a.shape[0]
    k = a.shape[1]
    n = b.shape[1]
    grid = ((n + TPB - 1) // TPB, (m + TPB - 1) // TPB)
    matmul_unrolled[grid, (TPB, TPB)](out, a, b, m, n, k)


@cuda.jit(device=True)
def _powf_chain(seed, steps):
    # `steps` float32 powers (math.pow on float32 is powf: a log, a multiply and an exp, done with
    # extra precision), each waiting for the one before. y ** 0.999 + 0.5 settles near 108 from
    # any y >= 0 and never reaches LIMIT: the flag returned is always 0.
    y = abs(seed)
    k = numba.float32(0.999)
    h = numba.float32(0.5)
    for _ in range(steps):
        y = math.pow(y, k) + h
    return numba.float32(y > numba.float32(LIMIT))
