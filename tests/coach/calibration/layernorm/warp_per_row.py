"""layernorm, honest: one warp per row instead of one thread. The 32 lanes stride along the row
(coalesced loads) for the mean, then for the mean of squared deviations from it (not E[x^2] -
mean^2, which cancels in the far-from-zero rows), each reduced with five warp shuffles, then for
the normalised write.

Stresses nothing unusual: three passes over the row from memory, as the naive kernel makes, but
32 lanes share each pass, in float32. A GPU: some 10-30 us at the scored shape (3, 3001), where the
naive kernel's single thread a row walks 3,001 columns three times in float64 (some 100 us);
several times faster than the naive kernel, slower than the expert (the row read once).
"""

import math

import numba
from numba import cuda

WARPS = 4            # rows per block, one warp each
TPB = 32 * WARPS
EPS = 1e-5


@cuda.jit
def layernorm_warp_rows(out, x, gamma, beta, rows, cols):
    lane = cuda.threadIdx.x % 32
    r = cuda.blockIdx.x * WARPS + cuda.threadIdx.x // 32
    if r < rows:  # the same for every lane of a warp: its shuffles see all 32 lanes
        s = numba.float32(0)
        for c in range(lane, cols, 32):
            s += x[r, c]
        for off in (16, 8, 4, 2, 1):
            s += cuda.shfl_xor_sync(0xFFFFFFFF, s, off)
        mean = s / numba.float32(cols)
        s2 = numba.float32(0)
        for c in range(lane, cols, 32):
            dv = x[r, c] - mean
            s2 += dv * dv
        for off in (16, 8, 4, 2, 1):
            s2 += cuda.shfl_xor_sync(0xFFFFFFFF, s2, off)
        rstd = numba.float32(1) / math.sqrt(s2 / numba.float32(cols) + numba.float32(EPS))
        for c in range(lane, cols, 32):
            out[r, c] = (x[r, c] - mean) * rstd * gamma[c] + beta[c]


def launch(out, x, gamma, beta):
    rows = x.shape[0]
    cols = x.shape[1]
    layernorm_warp_rows[(rows + WARPS - 1) // WARPS, TPB](out, x, gamma, beta, rows, cols)
