"""The scheduler's own promises (sim.py's docstring), each on a real kernel: blocks run on their
own, phase by phase; a barrier only some threads reach stops the block; warp primitives resolve
mask by mask; an endless kernel is stopped at its line; pooled greenlets leave nothing behind
between launches; every launch shape numbers its threads as CUDA does."""

import textwrap

import numpy as np

from tutor.engine.judge import simulate
from tutor.engine.trace import READ, SHARED, WRITE


def run(source, blocks, threads, named, **kw):
    return simulate(textwrap.dedent(source).lstrip("\n"), blocks, threads, named, **kw)


NEIGHBOUR = """
    import numba
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        cache = cuda.shared.array(8, numba.float32)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        cache[t] = a[i]
        cuda.syncthreads()
        out[i] = cache[(t + 1) % 8]
    """


def test_every_thread_reads_what_its_neighbour_wrote_before_the_barrier():
    a = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    trace, failures = run(NEIGHBOUR, (2,), (8,), [("out", out), ("a", a)])
    assert failures == []
    assert out.tolist() == [a[b * 8 + (t + 1) % 8] for b in range(2) for t in range(8)]
    shared = {x.aid for x in trace.arrays if x.space == SHARED}
    writes = [e for e in trace.events if e[2] in shared and e[1] == WRITE]
    reads = [e for e in trace.events if e[2] in shared and e[1] == READ]
    assert {e[6] for e in writes} == {0} and {e[6] for e in reads} == {1}  # phase 0, then phase 1
    # each block has its own shared array and its own barrier
    assert sorted(b.block[0] for b in trace.barriers) == [0, 1] and {b.phase for b in trace.barriers} == {0}


DIVERGENT = """
    from numba import cuda


    @cuda.jit
    def kernel(out):
        t = cuda.threadIdx.x
        if cuda.blockIdx.x == 0 and t < 2:
            cuda.syncthreads()
        out[cuda.grid(1)] = 1
    """


def test_a_barrier_only_some_threads_reach_stops_that_block_and_no_other():
    out = np.zeros(8, np.float32)
    trace, failures = run(DIVERGENT, (2,), (4,), [("out", out)])
    diverged = [f for f in failures if f.kind == "barrier_divergence"]
    assert len(diverged) == 1 and tuple(diverged[0].block)[:1] == (0,) and diverged[0].line == 8
    assert out[4:].tolist() == [1, 1, 1, 1]  # block 1 never met the barrier: it ran to its end
    assert set(trace.stopped) & set(range(4)) and not set(trace.stopped) & set(range(4, 8))


HALF_WARP_VOTES = """
    from numba import cuda


    @cuda.jit
    def kernel(out):
        lane = cuda.threadIdx.x
        if lane < 16:
            out[lane] = cuda.ballot_sync(0x0000FFFF, lane % 2 == 0)
        else:
            out[lane] = cuda.ballot_sync(0xFFFF0000, lane >= 24)
    """


def test_two_half_warps_each_vote_with_their_own_mask():
    out = np.zeros(32, np.int64)
    _, failures = run(HALF_WARP_VOTES, (1,), (32,), [("out", out)])
    assert failures == []
    assert set(out[:16].tolist()) == {0x5555} and set(out[16:].tolist()) == {0xFF000000}


ENDLESS = """
    from numba import cuda


    @cuda.jit
    def kernel(out):
        i = 0
        while out[0] == 0:
            i += 1
    """


def test_an_endless_kernel_is_stopped_at_its_line():
    out = np.zeros(1, np.float32)
    _, failures = run(ENDLESS, (1,), (2,), [("out", out)], timeout=0.5)
    stopped = [f for f in failures if f.kind == "timeout"]
    assert stopped and stopped[0].line in (7, 8), [f.to_json() for f in failures]


def test_pooled_greenlets_leave_nothing_behind_between_launches():
    a = np.arange(16, dtype=np.float32)
    first, second = np.zeros(16, np.float32), np.zeros(16, np.float32)
    trace1, _ = run(NEIGHBOUR, (2,), (8,), [("out", first), ("a", a)])
    run(ENDLESS, (1,), (2,), [("out", np.zeros(1, np.float32))], timeout=0.3)  # threads stopped mid-loop
    trace2, failures = run(NEIGHBOUR, (2,), (8,), [("out", second), ("a", a)])
    assert failures == [] and first.tolist() == second.tolist() and trace1.events == trace2.events


GRID_3D = """
    from numba import cuda


    @cuda.jit
    def kernel(out):
        x, y, z = cuda.grid(3)
        out[z, y, x] = cuda.threadIdx.x + 10 * cuda.blockIdx.y + 100 * cuda.threadIdx.z
    """


def test_a_3d_launch_numbers_its_threads_as_cuda_does():
    out = np.full((2, 3, 4), -1, np.int64)
    trace, failures = run(GRID_3D, (2, 3, 1), (2, 1, 2), [("out", out)])
    assert failures == []
    for z in range(2):
        for y in range(3):
            for x in range(4):
                assert out[z, y, x] == x % 2 + 10 * y + 100 * z
    assert trace.n_blocks == 6 and trace.threads_per_block == 4
    for tid in range(trace.n_blocks * trace.threads_per_block):
        block, thread = trace.where(tid)
        assert trace.tid_of(tuple(block) + (0,) * (3 - len(block)), tuple(thread) + (0,) * (3 - len(thread))) == tid
