"""The thread pane's model against real launches: statuses, per-thread events, phases, cell values.

Every trace here comes from our simulator running a real kernel (a puzzle's reference or a known
beginner mistake), so the model is tested on the data the app will give it.
"""

import textwrap
import time
from functools import lru_cache

import numpy as np
import pytest

from tutor.engine.analysis import detect
from tutor.engine.judge import check_sim, racing_of, simulate
from tutor.engine.verdict import ConfigRun
from tutor.engine.views.gridmodel import (OTHERS, READ_BY_SELECTED, UNTOUCHED, WRITTEN_BY_SELECTED, build,
                                    fmt_value)
from tutor.engine.trace import OOB_READ
from sample_kernels import DOT_NO_BARRIER
from tutor.puzzles import LaunchConfig, load_catalog


DOT_BARRIER_IN_GUARD = """
    import numba
    from numba import cuda

    TPB = 8


    @cuda.jit
    def kernel(out, a, b, size):
        cache = cuda.shared.array(TPB, numba.float32)
        i = cuda.grid(1)
        local_i = cuda.threadIdx.x
        cache[local_i] = 0
        if i < size:
            cache[local_i] = a[i] * b[i]
            cuda.syncthreads()
        if local_i == 0:
            total = numba.float32(0)
            for k in range(TPB):
                total += cache[k]
            out[0] = total
    """

MAP_RIGHT_NEIGHBOUR = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        local_i = cuda.threadIdx.x
        out[local_i] = a[local_i + 1] + 10
    """

ZIP_READS_A_TWICE = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a, b):
        local_i = cuda.threadIdx.x
        out[local_i] = a[local_i] + a[local_i]
    """

MAP_HALF_WRITTEN = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        local_i = cuda.threadIdx.x
        if local_i < 2:
            out[local_i] = a[local_i] + 10
    """

BLOCKS_THREAD_INDEX_ONLY = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a, size):
        i = cuda.threadIdx.x
        if i < size:
            out[i] = a[i] + 10
    """

WARP_NEIGHBOUR = """
    import numba
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        s = cuda.shared.array(64, numba.float32)
        t = cuda.threadIdx.x
        s[t] = a[t]
        cuda.syncwarp()
        out[t] = s[(t + 1) % cuda.blockDim.x]
    """

TILED_MATMUL = """
    import numba
    from numba import cuda

    TPB = 8


    @cuda.jit
    def kernel(out, a, b, size):
        a_tile = cuda.shared.array((TPB, TPB), numba.float32)
        b_tile = cuda.shared.array((TPB, TPB), numba.float32)
        i, j = cuda.grid(2)
        local_i = cuda.threadIdx.x
        local_j = cuda.threadIdx.y
        total = numba.float32(0)
        for t in range((size + TPB - 1) // TPB):
            start = t * TPB
            a_tile[local_i, local_j] = a[i, start + local_j]
            b_tile[local_i, local_j] = b[start + local_i, j]
            cuda.syncthreads()
            for k in range(TPB):
                total += a_tile[local_i, k] * b_tile[k, local_j]
            cuda.syncthreads()
        out[i, j] = total
    """


@lru_cache(maxsize=None)
def runs(pid, source=None):
    puzzle = load_catalog().get(pid)
    src = textwrap.dedent(source).lstrip("\n") if source else puzzle.reference
    return check_sim(puzzle, src, "kernel.py", seed=1, n_random=0, compile=False).runs


def run_of(pid, source=None, config=0):
    return runs(pid, source)[config]


def sim_run(source, blocks, threads, named, expected=None):
    """A ConfigRun for any kernel, the way check_sim makes one."""
    trace, failures = simulate(textwrap.dedent(source).lstrip("\n"), blocks, threads, named)
    out = dict(named)["out"]
    bad = None
    if expected is not None:
        failures += detect.wrong_output(trace, "test", expected, out, 1e-5)
        bad = detect.bad_cells(expected, out, 1e-5)
    config = LaunchConfig("test", threads, blocks, {k: v.shape for k, v in named if hasattr(v, "shape")})
    return ConfigRun(config, {}, expected if expected is not None else out.copy(), out, trace, failures,
                     raced=racing_of(trace, failures), bad=bad)


# -- statuses ----------------------------------------------------------------------------------------
def test_correct_dot_every_thread_ok():
    run = run_of("dot")
    assert not run.failures
    m = build(run)
    assert m.n_threads == 8 and m.n_blocks == 1 and m.grid == (1,) and m.block == (8,)
    assert [m.status(t) for t in range(8)] == ["ok"] * 8
    assert m.status_counts() == {"ok": 8}
    assert m.raced == set() and m.wrong_cells == {}
    assert detect.racing_threads(run.trace) == set()


def test_racing_dot_marks_every_thread_of_the_race():
    run = run_of("dot", DOT_NO_BARRIER)
    assert "race" in [f.kind for f in run.failures]
    m = build(run)
    # thread 0 reads every cache cell that threads 1..7 write in the same phase: all eight race
    assert detect.racing_threads(run.trace) == set(range(8))
    assert [m.status(t) for t in range(8)] == ["raced"] * 8
    # both sides of each reported pair are among the racing threads
    for f in run.failures:
        if f.kind == "race":
            assert m.tid_of(f.block, f.thread) in m.raced
            assert m.tid_of(f.block, f.other_thread) in m.raced


def test_racing_threads_cross_block_global_race():
    run = run_of("blocks", BLOCKS_THREAD_INDEX_ONLY)
    m = build(run)
    # every block writes out[0..3]: all of those threads race; nobody else touches out
    assert m.threads_per_block == 4 and m.n_blocks == 3
    assert m.raced == set(range(12))
    assert {m.status(t) for t in range(12)} == {"raced"}


def test_racing_threads_respects_syncwarp():
    a = np.arange(64, dtype=np.float32)
    one_warp = sim_run(WARP_NEIGHBOUR, (1,), (32,), [("out", np.zeros(64, np.float32)), ("a", a)])
    assert detect.racing_threads(one_warp.trace) == set()
    two_warps = sim_run(WARP_NEIGHBOUR, (1,), (64,), [("out", np.zeros(64, np.float32)), ("a", a)])
    # only the reads that cross a warp boundary race: 31 reads 32's cell, 63 reads 0's
    assert detect.racing_threads(two_warps.trace) == {0, 31, 32, 63}
    m = build(two_warps)
    assert [t for t in range(64) if m.status(t) == "raced"] == [0, 31, 32, 63]


def test_references_have_no_racing_threads():
    for pid in ("warp_reduce", "prefix_sum", "matmul", "conv1d"):
        for run in runs(pid):
            assert detect.racing_threads(run.trace) == set(), (pid, run.config.name)


def test_out_of_bounds_map():
    run = run_of("map", MAP_RIGHT_NEIGHBOUR)
    m = build(run)
    # 0..2 read their right neighbour (in bounds, but a wrong answer); 3 reads past the end
    assert [m.status(t) for t in range(4)] == ["wrong", "wrong", "wrong", "out_of_bounds"]
    oob = [e for e in m.events_of(3) if e.out_of_bounds]
    assert len(oob) == 1 and oob[0].opcode == OOB_READ and oob[0].index == (4,) and oob[0].array == "a"
    assert "out of bounds" in oob[0].text()


def test_diverged_barrier_stops_threads():
    size = 5
    a = np.arange(1, size + 1, dtype=np.float32)
    run = sim_run(DOT_BARRIER_IN_GUARD, (1,), (8,), [("out", np.zeros(1, np.float32)), ("a", a), ("b", a),
                                                     ("size", size)])
    assert "barrier_divergence" in [f.kind for f in run.failures]
    m = build(run)
    stopped = {t for t in range(m.n_threads) if m.status(t) == "stopped"}
    assert stopped == set(range(size)) == set(run.trace.stopped)
    assert "diverged barrier" in m.stop_reason(0)
    assert m.stop_reason(7) is None
    assert all(m.status(t) == "ok" for t in range(size, 8))


def test_wrong_outputs():
    run = run_of("zip", ZIP_READS_A_TWICE)
    m = build(run)
    assert [m.status(t) for t in range(4)] == ["wrong"] * 4
    assert sorted(m.wrong_cells) == [0, 1, 2, 3]
    for flat, cell in m.wrong_cells.items():
        assert cell.index == (flat,)
        assert cell.expected == pytest.approx(float(run.expected[flat]))
        assert cell.got == pytest.approx(float(run.got[flat]))
        assert cell.tid == flat and cell.line is not None and not cell.unwritten
        assert cell.text() == f"{fmt_value(cell.expected, True)}/{fmt_value(cell.got, True)}"


def test_unwritten_output_cells_and_idle_threads():
    run = run_of("map", MAP_HALF_WRITTEN)
    m = build(run)
    assert [m.status(t) for t in range(4)] == ["ok", "ok", "idle", "idle"]
    assert sorted(m.wrong_cells) == [2, 3]
    assert all(c.unwritten and c.tid is None for c in m.wrong_cells.values())
    assert m.events_of(2) == [] and m.n_events(2) == 0


def test_priority_raced_over_wrong():
    run = run_of("dot", DOT_NO_BARRIER)
    m = build(run)
    writer = m.wrong_cells[0].tid
    assert writer == 0 and m.status(writer) == "raced"


def test_wrong_cells_beyond_the_verdicts_details():
    n = 100
    a = np.arange(n, dtype=np.float32)
    source = """
        from numba import cuda


        @cuda.jit
        def kernel(out, a):
            i = cuda.grid(1)
            if i < 100:
                out[i] = a[i] * 2
        """
    run = sim_run(source, (4,), (32,), [("out", np.zeros(n, np.float32)), ("a", a)], expected=a * 3)
    wrong = next(f for f in run.failures if f.kind == "wrong_output")
    assert len(wrong.details) < n
    m = build(run)
    assert len(m.wrong_cells) == n - 1  # a[0] * 2 == a[0] * 3 == 0
    assert m.status_counts() == {"wrong": n - 1, "ok": 1, "idle": 128 - n}


# -- events, phases and values -----------------------------------------------------------------------
def test_thread_events_in_order():
    run = run_of("dot")
    m = build(run)
    a, b = run.inputs["a"], run.inputs["b"]
    evs = m.events_of(3)
    assert [(e.op, e.cell, e.phase) for e in evs] == [("read", "a[3]", 0), ("read", "b[3]", 0),
                                                    ("write", "shared cache[3]", 0)]
    assert evs[2].value == pytest.approx(float(a[3] * b[3]))
    assert evs[0].text() == f"phase 0  read  a[3] = {fmt_value(float(a[3]))}  line {evs[0].line}"
    zero = m.events_of(0)
    assert [e.phase for e in zero] == [0] * 3 + [1] * 9
    assert zero[-1].cell == "out[0]" and zero[-1].is_write
    assert m.where(3) == ((0,), (3,)) and m.tid_of((0,), (3,)) == 3


def test_phases_and_cell_values():
    run = run_of("dot")
    m = build(run)
    a, b = run.inputs["a"], run.inputs["b"]
    cache = m.shared_of((0,))[0]
    out = m.output
    assert m.n_phases == 2 and m.phase_end_line(0) is not None and m.phase_end_line(1) is None
    assert cache.name == "cache" and cache.role == "shared" and out.name == "out" and out.role == "output"
    assert [x.name for x in m.inputs()] == ["a", "b"]
    assert m.values_at(cache.aid, 0) == [None] * 8  # shared memory starts unwritten
    assert m.values_after(cache.aid, 0) == pytest.approx([float(x) for x in a * b])
    assert m.values_at(out.aid, 1) == [0.0]  # out is written in phase 1
    assert m.final(out.aid) == pytest.approx([float(run.expected[0])])
    # who touched what in each phase
    touch0 = m.touchers(cache.aid, 0)
    assert touch0 == {t: ([], [t]) for t in range(8)}
    touch1 = m.touchers(cache.aid, 1)
    assert touch1 == {t: ([0], []) for t in range(8)}
    assert m.cell_marks(cache.aid, 0, 2) == [OTHERS, OTHERS, WRITTEN_BY_SELECTED] + [OTHERS] * 5
    assert m.cell_marks(cache.aid, 1, 0) == [READ_BY_SELECTED] * 8
    assert m.cell_marks(cache.aid, 1, 5) == [OTHERS] * 8
    assert m.cell_marks(out.aid, 0, 0) == [UNTOUCHED]
    assert list(np.flatnonzero(m.active(1))) == [0]
    assert m.active(0).all()


def test_values_match_trace_cells_at():
    for run in runs("matmul") + runs("prefix_sum"):
        m = build(run)
        for info in run.trace.arrays:
            for phase in range(m.n_phases + 1):
                assert m.values_at(info.aid, phase) == run.trace.cells_at(info.aid, phase), \
                    (run.config.name, info.name, phase)


def test_default_thread_follows_the_first_failure():
    run = run_of("map", MAP_RIGHT_NEIGHBOUR)
    assert build(run).default_thread() == 3
    assert build(run_of("dot")).default_thread() == 0


def test_speed_on_a_big_trace():
    """Not an assertion: how long the model takes on a 64x64 tiled matmul (about 650k events)."""
    n = 64
    rng = np.random.default_rng(0)
    a = rng.integers(-9, 10, (n, n)).astype(np.float32)
    b = rng.integers(-9, 10, (n, n)).astype(np.float32)
    run = sim_run(TILED_MATMUL, (8, 8), (8, 8), [("out", np.zeros((n, n), np.float32)), ("a", a), ("b", b),
                                                  ("size", n)], expected=a @ b)
    started = time.perf_counter()
    m = build(run)
    built = time.perf_counter() - started
    started = time.perf_counter()
    for phase in range(m.n_phases):
        for info in m.inputs() + m.shared_of((3, 4)) + [m.output]:
            m.values_after(info.aid, phase)
            m.cell_marks(info.aid, phase, 1000)
        m.active(phase)
    m.events_of(1000)
    walked = time.perf_counter() - started
    print(f"\n{len(run.trace.events)} events: model built in {built:.3f}s, "
          f"every phase of every shown array in {walked:.3f}s")
    assert m.status_counts() == {"ok": n * n}


MAP_OFF_BY_A_LITTLE = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        i = cuda.threadIdx.x
        if i < 70:
            out[i] = a[i] + 11
        else:
            out[i] = (a[i] + 10) * 1.00003
    """


def test_grid_paints_only_the_cells_the_check_found_wrong_at_the_puzzles_tolerance():
    """70 cells are wrong by 1; 30 more are off by 3e-5 relative, inside a tolerance of 1e-4 (as
    layernorm's) but outside the grid's old default of 1e-5. The verdict keeps 64 cells' details;
    the grid once filled in the rest at its own tolerance and painted 100 cells red."""
    import dataclasses

    puzzle = load_catalog().get("map")
    n = 100
    config = LaunchConfig(f"{n} elements", (n,), (1,), {"out": (n,), "a": (n,)})
    puzzle = dataclasses.replace(puzzle, tolerance=1e-4, configs=[config])
    result = check_sim(puzzle, textwrap.dedent(MAP_OFF_BY_A_LITTLE).lstrip("\n"), seed=1, n_random=0, compile=False)
    wrong = [f for f in result.verdict.failures if f.kind == "wrong_output"]
    assert wrong and wrong[0].count == 70
    m = build(result.runs[0])
    assert sorted(m.wrong_cells) == list(range(70))
    assert m.status_counts() == {"wrong": 70, "ok": 30}


def test_grid_takes_the_racing_threads_from_the_run_not_from_the_trace():
    """The race was found in the child that ran the kernel; the view draws the run's answer."""
    run = run_of("dot", DOT_NO_BARRIER)
    assert run.raced and build(run).raced == set(run.raced)
    forged = ConfigRun(run.config, run.inputs, run.expected, run.got, run.trace, run.failures,
                       raced=[0, -1, 10 ** 9, "3"], bad=run.bad)
    assert build(forged).raced == {0}  # out-of-range or non-int thread numbers are dropped
