"""Local arrays in a run judged by detectors alone (the verifier's): untraced, and FastLocal dicts
where they can be. Such a run must give the verdict the fully traced run gives, word for word, on
every kernel, above all on the ones whose local arrays go wrong: each case below is run both ways
and compared, and each faulty case is one that a FastLocal without its checks would get wrong
(an out-of-bounds write it keeps under a bogus key, a read it cannot answer)."""

import textwrap

import numpy as np
import pytest

from tutor.engine.judge import simulate
from tutor.engine.trace import LOCAL, READ, WRITE

HEADER = "from numba import cuda\nimport numba\nimport math\n"


def both(src, threads=4, blocks=1, n=4, dtype=np.float32):
    """(fast, traced): each (output, [(kind, message, line, block, thread), ...], trace)."""
    source = HEADER + textwrap.dedent(src).lstrip("\n")
    runs = []
    for trace_local in (False, True):
        out = np.full(n, np.nan if dtype == np.float32 else 0, dtype=dtype)
        trace, failures = simulate(source, blocks, threads, [("out", out)], trace_local=trace_local)
        said = sorted((f.kind, f.message, f.line, f.block, f.thread) for f in failures)
        runs.append((out, said, trace))
    return runs


def assert_same(fast, traced):
    assert np.array_equal(fast[0], traced[0], equal_nan=True), (fast[0], traced[0])
    assert fast[1] == traced[1]


def local_events(trace):
    spaces = [a.space for a in trace.arrays]
    return [e for e in trace.events if spaces[e[2]] == LOCAL and e[1] in (READ, WRITE)]


def test_a_correct_kernel_gives_the_same_output_and_its_local_arrays_leave_no_events():
    fast, traced = both("""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            acc = cuda.local.array((2, 3), numba.float32)
            r = cuda.local.array(3, numba.float32)
            for j in range(3):
                r[j] = j + 0.5 * i
            for a in range(2):
                for j in range(3):
                    acc[a, j] = 0
                    acc[a, j] += r[j] * (a + 1)
            out[i] = acc[0, 0] + acc[1, 2] + len(r) + acc.shape[1] + r.size
    """)
    assert_same(fast, traced)
    assert not fast[1]
    assert np.allclose(fast[0], [(0.5 * i) + 2 * (2 + 0.5 * i) + 9 for i in range(4)])
    assert local_events(traced[2]) and not local_events(fast[2])


@pytest.mark.parametrize("write", ["acc[3] = 1.0", "acc[-1] = 1.0", "acc[i + 3] = 1.0"])
def test_an_out_of_bounds_local_write_is_reported_with_its_line(write):
    fast, traced = both(f"""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            acc = cuda.local.array(3, numba.float32)
            acc[0] = 2.0
            {write}
            out[i] = acc[0]
    """)
    assert_same(fast, traced)
    assert {s[:1] + s[2:3] for s in fast[1]} == {("out_of_bounds", 9)}  # the write's line


def test_a_value_written_out_of_bounds_is_not_read_back():
    # a dict keeps acc[3] = 3.0 under key 3 and would hand it back: the checked run reads nothing
    fast, traced = both("""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            acc = cuda.local.array(3, numba.float32)
            acc[3] = 3.0
            out[i] = acc[3]
    """)
    assert_same(fast, traced)
    assert np.isnan(fast[0]).all()
    assert {s[0] for s in fast[1]} == {"out_of_bounds"}


def test_an_out_of_bounds_write_that_steers_a_branch_is_judged_as_the_checked_run_judges_it():
    fast, traced = both("""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            acc = cuda.local.array((2, 2), numba.float32)
            acc[0, 0] = 0.0
            acc[2, 0] = 1.0
            if acc[0, 0] == 0.0:
                out[i] = 1.0
    """)
    assert_same(fast, traced)


@pytest.mark.parametrize("read", ["acc[5]", "acc[-2]", "acc[1, 0]"])
def test_an_out_of_bounds_or_malformed_local_read_gives_the_checked_runs_report(read):
    fast, traced = both(f"""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            acc = cuda.local.array(3, numba.float32)
            for j in range(3):
                acc[j] = j
            out[i] = {read}
    """)
    assert_same(fast, traced)
    assert fast[1]


def test_a_used_unwritten_local_cell_is_reported_and_an_unused_one_is_not():
    used, traced = both("""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            acc = cuda.local.array(3, numba.float32)
            acc[0] = 1.0
            out[i] = acc[2]
    """)
    assert_same(used, traced)
    assert [s[0] for s in used[1]] == ["uninitialized_read"]
    unused, traced = both("""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            acc = cuda.local.array(3, numba.float32)
            acc[0] = 1.0
            x = acc[2]
            out[i] = acc[0]
    """)
    assert_same(unused, traced)
    assert not unused[1]


def test_an_unwritten_shared_value_stored_into_a_local_array_is_reported_where_the_checked_run_reports_it():
    # storing is a use for the checked arrays; a dict would keep the Undefined and report it later
    for tail in ("out[i] = acc[0]", "acc[0] = 1.0; out[i] = 0.0", "out[i] = 0.0"):
        fast, traced = both(f"""
            @cuda.jit
            def kernel(out):
                i = cuda.threadIdx.x
                sh = cuda.shared.array(8, numba.float32)
                acc = cuda.local.array(2, numba.float32)
                acc[0] = sh[i + 4]
                {tail}
        """)
        assert_same(fast, traced)
        assert [s[0] for s in fast[1]] == ["uninitialized_read"], tail


def test_a_view_of_a_local_array_works_as_in_the_checked_run():
    fast, traced = both("""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            acc = cuda.local.array((2, 3), numba.float32)
            for a in range(2):
                for j in range(3):
                    acc[a, j] = a * 10 + j
            row = acc[1]
            row[2] = row[2] + i
            out[i] = acc[1, 2]
    """)
    assert_same(fast, traced)
    assert fast[0].tolist() == [12, 13, 14, 15]


def test_an_int_local_array_keeps_its_wraparound_and_a_3d_one_its_indexing():
    fast, traced = both("""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            c = cuda.local.array(1, numba.int8)
            c[0] = 100 + 50 * i
            t = cuda.local.array((2, 2, 2), numba.float32)
            t[1, 0, 1] = 0.5
            out[i] = c[0] + t[1, 0, 1]
    """)
    assert_same(fast, traced)
    assert fast[0].tolist() == [100.5, -105.5, -55.5, -5.5]


@pytest.mark.parametrize("dtype, store", [
    ("int32", "2147483647 + i"),            # wraps
    ("int32", "-2.75 * i"),                 # truncated toward zero
    ("int64", "math.nan if i == 1 else math.inf if i == 2 else i"),  # NaN and infinity as 0
    ("uint8", "i * 100 - 150"),             # negative and past 255, wrapped
    ("int16", "40000 * i + 0.5"),
    ("boolean", "i * 2 - 3"),               # 0 or 1
])
def test_an_int_local_array_keeps_what_the_checked_array_keeps(dtype, store):
    # the fast run's integer arrays are IntFastLocal dicts (FastLocal's were floats only)
    fast, traced = both(f"""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            c = cuda.local.array(2, numba.{dtype})
            c[1] = {store}
            c[0] = c[1]
            c[0] += 1
            out[i] = c[0] * 1.0 + c[1]
    """)
    assert_same(fast, traced)
    assert not local_events(fast[2])


@pytest.mark.parametrize("body", [
    "out[i] = 1.0 / acc[0]",                       # ZeroDivisionError
    "for v in acc:\n        out[i] = v",           # iterating over an array
    "cuda.atomic.add(acc, 0, 1.0)\n    out[i] = acc[0]",
    "acc[0:1] = 1.0",                               # assigning to a slice
])
def test_a_thread_error_near_a_local_array_is_worded_as_the_checked_run_words_it(body):
    fast, traced = both("""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            acc = cuda.local.array(2, numba.float32)
            acc[0] = 0.0
            acc[1] = 0.0
            BODY
    """.replace("BODY", body.replace("\n", "\n        ")))
    assert_same(fast, traced)


@pytest.mark.parametrize("catch", ["except Exception:", "except BaseException:", "except:"])
def test_a_kernel_that_catches_the_exception_still_gets_the_checked_verdict(catch):
    fast, traced = both("""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            acc = cuda.local.array(2, numba.float32)
            acc[0] = 1.0
            try:
                x = acc[5]
            CATCH
                x = 7.0
            out[i] = x
    """.replace("CATCH", catch))
    assert_same(fast, traced)
    assert {s[0] for s in fast[1]} == {"out_of_bounds"}


def test_a_barrier_divergence_and_a_race_beside_local_arrays_are_reported_alike():
    fast, traced = both("""
        @cuda.jit
        def kernel(out):
            i = cuda.threadIdx.x
            sh = cuda.shared.array(4, numba.float32)
            acc = cuda.local.array(2, numba.float32)
            acc[0] = i
            sh[i] = acc[0]
            out[i] = sh[(i + 1) % 4]
            if i < 2:
                cuda.syncthreads()
    """)
    assert_same(fast, traced)
    assert {s[0] for s in fast[1]} == {"race", "barrier_divergence"} or {s[0] for s in fast[1]} == {"barrier_divergence"}
