"""softmax, honest: one warp per row instead of one thread. The 32 lanes stride along the row
(neighbouring lanes read neighbouring columns, so every load is coalesced) for the maximum, then
for the sum of exp(x - max), each reduced with five warp shuffles, then for the normalised write.

Stresses nothing unusual: three passes over the row from memory, as the naive kernel makes, but
32 lanes share each pass and keep float32 sums. A GPU: some 10-30 us at the scored shape (4, 3001),
where the naive kernel's single thread a row walks 3,001 columns three times (some 100-200 us);
several times faster than the naive kernel, slower than the expert (the row read once).
"""

import math

import numba
from numba import cuda

WARPS = 4            # rows per block, one warp each
TPB = 32 * WARPS
NEG_BIG = -3.0e38    # finite stand-in for -inf


@cuda.jit
def softmax_warp_rows(out, x, rows, cols):
    lane = cuda.threadIdx.x % 32
    r = cuda.blockIdx.x * WARPS + cuda.threadIdx.x // 32
    if r < rows:  # the same for every lane of a warp: its shuffles see all 32 lanes
        m = numba.float32(NEG_BIG)
        for c in range(lane, cols, 32):
            m = max(m, x[r, c])
        for off in (16, 8, 4, 2, 1):
            m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, off))
        s = numba.float32(0)
        for c in range(lane, cols, 32):
            s += math.exp(x[r, c] - m)
        for off in (16, 8, 4, 2, 1):
            s += cuda.shfl_xor_sync(0xFFFFFFFF, s, off)
        inv = numba.float32(1) / s
        for c in range(lane, cols, 32):
            out[r, c] = math.exp(x[r, c] - m) * inv


def launch(out, x):
    rows = x.shape[0]
    cols = x.shape[1]
    softmax_warp_rows[(rows + WARPS - 1) // WARPS, TPB](out, x, rows, cols)
