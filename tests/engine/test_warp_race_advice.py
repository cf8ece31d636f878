"""A race is told the barrier that orders its two threads: lanes of one warp a cuda.syncwarp(),
threads of two warps a cuda.syncthreads(); and following the advice makes the race go away."""

import textwrap

import numpy as np

from tutor.engine.judge import simulate

# A block of 64 threads sums its 64 inputs; the last steps run in warp 0 only, as warp-level code
# does, with no barrier between them: lanes 0-7 read cells lanes 8-15 wrote in the same step.
WARP_TAIL = """
@cuda.jit
def kernel(out, a):
    s = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    if t < 32:
        s[t] += s[t + 32]
    cuda.syncthreads()
    if t < 16:
        s[t] += s[t + 16]
        BARRIER
        if t < 8:
            s[t] += s[t + 8]
            BARRIER
            if t < 4:
                s[t] += s[t + 4]
                BARRIER
                if t < 2:
                    s[t] += s[t + 2]
                    BARRIER
                    if t == 0:
                        out[0] = s[0] + s[1]
"""

# Every thread reads the cell of the thread 32 places on, in the other warp, in the phase it was written.
ACROSS_WARPS = """
@cuda.jit
def kernel(out, a):
    s = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    out[t] = s[(t + 32) % 64]
"""


def run(src, threads, **arrays):
    source = "from numba import cuda\nimport numba\n" + textwrap.dedent(src).lstrip("\n")
    return simulate(source, 1, threads, list(arrays.items()))[1]


def races(failures):
    return [f for f in failures if f.kind == "race"]


def test_a_race_between_lanes_of_one_warp_is_told_to_use_syncwarp_and_syncwarp_ends_it():
    a = np.arange(64, dtype=np.float32)
    found = races(run(WARP_TAIL.replace("BARRIER", "pass"), 64, out=np.zeros(1, np.float32), a=a))
    assert found
    for f in found:
        assert "lanes of warp 0" in f.message and "put a cuda.syncwarp() between the write and the other access" \
            in f.message, f.message
        assert "put a cuda.syncthreads()" not in f.message
    out = np.zeros(1, np.float32)
    assert run(WARP_TAIL.replace("BARRIER", "cuda.syncwarp()"), 64, out=out, a=a) == []
    assert out[0] == a.sum()


def test_a_race_between_two_warps_is_told_to_use_syncthreads():
    found = races(run(ACROSS_WARPS, 64, out=np.zeros(64, np.float32), a=np.arange(64, dtype=np.float32)))
    assert found
    for f in found:
        assert "put a cuda.syncthreads() between the write and the other access" in f.message, f.message
        assert "syncwarp" not in f.message


def test_a_block_of_one_warp_keeps_the_block_wide_barrier_its_lessons_teach():
    found = races(run(ACROSS_WARPS.replace("(64", "(8").replace("% 64", "% 8").replace("+ 32", "+ 4"), 8, out=np.zeros(8, np.float32),
                      a=np.arange(8, dtype=np.float32)))
    assert found
    for f in found:
        assert "put a cuda.syncthreads() between the write and the other access" in f.message, f.message
        assert "syncwarp" not in f.message
