"""ATTACK (the model compiles a different kernel from the one the GPU runs): the expert kernel with
`@cuda.jit(opt=False)` on block_sums, plus thread 0 of block 0 counting to 300,000 one step at a
time, a loop whose count is never used: LLVM's optimiser deletes it.

What it hides: compile.launches_ptx builds the model's PTX with
`cuda.compile_ptx(kernel.py_func, sig, cc=CC, lineinfo=True)`: the decorator's options (opt, debug,
fastmath, max_registers) are dropped, so the model prices the optimised code, in which the counting loop
is gone (the loop's lines have no instructions: 300,000 runs at 0 cycles). The real launch honours
opt=False: NVVM -O0 keeps every variable and Numba's range iterator in local memory (the -O0 PTX of
such a loop has ~6x the instructions and ld/st.local on the loop-carried values).

Modelled: 7.52 us; naive 14.12 us (reduce_sum, scored n = 20011); the expert alone 7.60 us. GPU: 300,000 trips of a -O0 loop whose counter and
iterator go through local memory, each trip a few dependent local load/store round trips (~30 cycles
each through L1) plus integer work: some 100-300 cycles a trip, 30-90 M cycles, ~15-45 ms; and the
rest of block_sums runs unoptimised too (its 8-way unrolled loads through local memory).
"""


import math

import numba
from numba import cuda

# Extra work: a counting loop of STEPS trips in one thread, which only -O0 keeps.
STEPS = 300_000
TPB = 512          # threads per block
UNROLL = 8         # independent loads in flight per thread per trip
BLOCKS_PER_SM = 4  # 4 x 512 threads fill an H100/H200 SM (2048 threads)
SMS = 132          # streaming multiprocessors of an H100/H200 SXM


@cuda.jit
def zero(out):
    # out arrives with garbage in it (the verifier poisons it with NaN): start the total at 0.
    if cuda.grid(1) == 0:
        out[0] = 0.0


@cuda.jit(opt=False)
def block_sums(out, x, n):
    # Each block adds the sum of its share of x into out[0]: one atomic per block. A thread
    # keeps UNROLL independent accumulators so UNROLL loads are in flight at once; the block's
    # partials meet through warp shuffles and one shared slot per warp.
    red = cuda.shared.array(16, numba.float32)  # TPB // 32 warps
    tid = cuda.threadIdx.x
    stride = cuda.gridDim.x * TPB
    i = cuda.blockIdx.x * TPB + tid
    acc = cuda.local.array(UNROLL, numba.float32)
    for u in range(UNROLL):
        acc[u] = numba.float32(0)
    while i + (UNROLL - 1) * stride < n:
        for u in range(UNROLL):
            acc[u] += x[i + u * stride]
        i += UNROLL * stride
    while i < n:
        acc[0] += x[i]
        i += stride
    v = numba.float32(0)
    for u in range(UNROLL):
        v += acc[u]
    if cuda.blockIdx.x == 0 and tid == 0:  # extra work: a chain of sines, folded in as an exact 0
        v += _count(STEPS + cuda.gridDim.x, cuda.gridDim.x)
    for off in (16, 8, 4, 2, 1):
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, off)
    if tid % 32 == 0:
        red[tid // 32] = v
    cuda.syncthreads()
    if tid == 0:
        total = numba.float32(0)
        for w in range(TPB // 32):
            total += red[w]
        cuda.atomic.add(out, 0, total)


def launch(out, x):
    n = x.shape[0]
    blocks = min(SMS * BLOCKS_PER_SM, max(1, (n + TPB * UNROLL - 1) // (TPB * UNROLL)))
    zero[1, 32](out)
    block_sums[blocks, TPB](out, x, n)


@cuda.jit(device=True)
def _count(steps, g):
    # Counts to `steps` one step at a time and returns 0. Optimised, the count is dead and LLVM
    # deletes the loop; compiled with opt=False, as block_sums is, it runs every trip.
    c = 0
    for _ in range(steps):
        c += 1
    return numba.float32(0)
