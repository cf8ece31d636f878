"""Each detection, with tiny kernels that should and should not trigger it."""

import re
import textwrap

import numpy as np
import pytest

from tutor.engine.judge import simulate


def run(src, blocks, threads, **arrays):
    source = "from numba import cuda\nimport numba\nimport math\n" + textwrap.dedent(src).lstrip("\n")
    budget = arrays.pop("_budget", None)
    trace, failures = simulate(source, blocks, threads, list(arrays.items()), budget=budget)
    return trace, failures


def kinds(failures):
    return sorted({f.kind for f in failures})


def f32(*shape, fill=None):
    if fill is None:
        return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return np.full(shape, fill, dtype=np.float32)


# -- out of bounds --------------------------------------------------------------------------------
def test_missing_guard_reads_and_writes_out_of_bounds():
    out, a = f32(4, fill=0), f32(4)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            i = cuda.threadIdx.x
            out[i] = a[i] + 10
        """, 1, 8, out=out, a=a)
    oob = [f for f in failures if f.kind == "out_of_bounds"]
    assert {f.array for f in oob} == {"out", "a"}
    read = next(f for f in oob if f.array == "a")
    assert read.thread == (4,) and read.index == (4,) and read.line == 7 and read.count == 4
    assert out.tolist() == [10, 11, 12, 13]


def test_negative_index_is_out_of_bounds_even_though_numpy_wraps():
    out, a = f32(4, fill=0), f32(4)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            i = cuda.threadIdx.x
            out[i] = a[i - 1]
        """, 1, 4, out=out, a=a)
    (f,) = [f for f in failures if f.kind == "out_of_bounds"]
    assert f.index == (-1,) and f.thread == (0,) and "negative index" in f.message.lower()
    assert out[0] != a[3]  # it did not wrap round to the last element


def test_guarded_kernel_has_no_out_of_bounds():
    out, a = f32(4, fill=0), f32(4)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            i = cuda.threadIdx.x
            if i < a.shape[0]:
                out[i] = a[i] + 10
        """, 1, 8, out=out, a=a)
    assert failures == []


def test_2d_out_of_bounds_names_the_index_tuple():
    out, a = f32(2, 2, fill=0), f32(2, 2)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            i, j = cuda.grid(2)
            out[i, j] = a[i, j]
        """, (1, 1), (3, 3), out=out, a=a)
    f = next(f for f in failures if f.kind == "out_of_bounds" and f.array == "a")
    assert f.index in {(2, 0), (0, 2)}


# -- races ----------------------------------------------------------------------------------------
TILED = """
    TPB = 4

    @cuda.jit
    def kernel(out, a, b, size):
        sa = cuda.shared.array((TPB, TPB), numba.float32)
        sb = cuda.shared.array((TPB, TPB), numba.float32)
        i, j = cuda.grid(2)
        ti = cuda.threadIdx.x
        tj = cuda.threadIdx.y
        acc = 0.0
        for k0 in range(0, size, TPB):
            if i < size and k0 + tj < size:
                sa[ti, tj] = a[i, k0 + tj]
            else:
                sa[ti, tj] = 0.0
            if j < size and k0 + ti < size:
                sb[ti, tj] = b[k0 + ti, j]
            else:
                sb[ti, tj] = 0.0
            cuda.syncthreads()
            for k in range(TPB):
                acc += sa[ti, k] * sb[k, tj]
            SECOND_BARRIER
        if i < size and j < size:
            out[i, j] = acc
    """


def _matmul(second_barrier):
    size = 8
    a = np.random.default_rng(0).integers(-3, 4, (size, size)).astype(np.float32)
    b = np.random.default_rng(1).integers(-3, 4, (size, size)).astype(np.float32)
    out = f32(size, size, fill=0)
    src = TILED.replace("SECOND_BARRIER", "cuda.syncthreads()" if second_barrier else "pass")
    trace, failures = run(src, (2, 2), (4, 4), out=out, a=a, b=b, size=size)
    return a, b, out, trace, failures


def test_correct_tiled_matmul_has_no_race():
    a, b, out, trace, failures = _matmul(True)
    assert failures == []
    assert np.array_equal(out, a @ b)
    assert trace.n_phases() == 5  # two tiles, two barriers each


def test_missing_syncthreads_in_tiled_matmul_is_a_race():
    _, _, _, _, failures = _matmul(False)
    races = [f for f in failures if f.kind == "race"]
    assert races, kinds(failures)
    f = races[0]
    assert f.array in {"sa", "sb"} and f.thread != f.other_thread
    assert f.line is not None and f.block is not None
    assert "syncthreads" in f.message


def test_two_blocks_writing_one_global_cell_race():
    out, a = f32(1, fill=0), f32(8)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            if cuda.threadIdx.x == 0:
                out[0] = a[cuda.blockIdx.x]
        """, 2, 4, out=out, a=a)
    (f,) = [f for f in failures if f.kind == "race"]
    assert "Blocks run in any order" in f.message and f.array == "out"


def test_atomics_on_one_cell_do_not_race():
    out, a = f32(1, fill=0), f32(8)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            cuda.atomic.add(out, 0, a[cuda.grid(1)])
        """, 2, 4, out=out, a=a)
    assert failures == []
    assert out[0] == a.sum()


def test_read_then_write_by_neighbour_in_one_phase_races():
    out, a = f32(8, fill=0), f32(8)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            s = cuda.shared.array(8, numba.float32)
            t = cuda.threadIdx.x
            s[t] = a[t]
            cuda.syncthreads()
            if t > 0:
                s[t] = s[t] + s[t - 1]
            cuda.syncthreads()
            out[t] = s[t]
        """, 1, 8, out=out, a=a)
    (f,) = [f for f in failures if f.kind == "race"]
    assert f.array == "s" and f.line == 11


def test_syncwarp_orders_lanes_of_one_warp():
    out = f32(32, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            s = cuda.shared.array(32, numba.float32)
            t = cuda.threadIdx.x
            s[t] = t
            cuda.syncwarp()
            out[t] = s[31 - t]
        """, 1, 32, out=out)
    assert failures == []
    assert out.tolist() == list(range(31, -1, -1))


# -- barrier divergence ---------------------------------------------------------------------------
def test_barrier_inside_a_branch_diverges():
    out, a = f32(8, fill=0), f32(8)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            s = cuda.shared.array(8, numba.float32)
            t = cuda.threadIdx.x
            if t < 4:
                s[t] = a[t]
                cuda.syncthreads()
                out[t] = s[t]
        """, 1, 8, out=out, a=a)
    (f,) = [f for f in failures if f.kind == "barrier_divergence"]
    assert f.line == 10 and f.block == (0,)
    assert "4 of 8 threads" in f.message and "already finished" in f.message


def test_two_different_barriers_diverge():
    out = f32(8, fill=0)
    trace, failures = run("""
        @cuda.jit
        def kernel(out):
            t = cuda.threadIdx.x
            if t % 2 == 0:
                cuda.syncthreads()
            else:
                cuda.syncthreads()
            out[t] = 1
        """, 1, 8, out=out)
    (f,) = [f for f in failures if f.kind == "barrier_divergence"]
    assert "line 10" in f.message and f.line == 8
    assert len(trace.stopped) == 8  # nobody went on past the diverged barrier


def test_barrier_reached_by_all_threads_does_not_diverge():
    out = f32(8, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            t = cuda.threadIdx.x
            n = cuda.syncthreads_count(t < 3)
            out[t] = n
        """, 1, 8, out=out)
    assert failures == [] and out.tolist() == [3] * 8


# -- unwritten shared memory ----------------------------------------------------------------------
def test_reading_shared_memory_no_thread_wrote():
    out, a = f32(8, fill=0), f32(6)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            s = cuda.shared.array(8, numba.float32)
            t = cuda.threadIdx.x
            if t < 6:
                s[t] = a[t]
            cuda.syncthreads()
            out[t] = s[7 - t]
        """, 1, 8, out=out, a=a)
    (f,) = [f for f in failures if f.kind == "uninitialized_read"]
    assert f.array == "s" and f.index in {(6,), (7,)} and f.count == 2 and f.line == 11


def test_zero_filled_shared_memory_is_fine():
    out, a = f32(8, fill=0), f32(6)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            s = cuda.shared.array(8, numba.float32)
            t = cuda.threadIdx.x
            if t < 6:
                s[t] = a[t]
            else:
                s[t] = 0
            cuda.syncthreads()
            out[t] = s[7 - t]
        """, 1, 8, out=out, a=a)
    assert failures == []


def test_a_thread_adding_into_its_own_never_written_cell_reads_unwritten_memory():
    out, a = f32(4, fill=0), f32(4)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            t = cuda.threadIdx.x
            cache = cuda.shared.array(4, numba.float32)
            cache[t] += a[t]
            cuda.syncthreads()
            out[t] = cache[t]
        """, 1, 4, out=out, a=a)
    assert kinds(failures) == ["uninitialized_read"]
    (f,) = failures
    assert f.array == "cache" and f.line == 8 and f.index == (0,) and f.thread == (0,) and f.count == 4


NEVER_USED = {
    "threads past the end read a neighbour nobody wrote": """
        @cuda.jit
        def kernel(out, a, size):
            t = cuda.threadIdx.x
            cache = cuda.shared.array(9, numba.float32)
            if t < size:
                cache[t] = a[t]
            cuda.syncthreads()
            right = cache[t + 1]
            if t + 1 < size:
                out[t] = cache[t] + right
        """,
    "every thread reads, only those in range use it": """
        @cuda.jit
        def kernel(out, a, size):
            t = cuda.threadIdx.x
            cache = cuda.shared.array(8, numba.float32)
            if t < size:
                cache[t] = a[t]
            cuda.syncthreads()
            x = cache[t]
            y = abs(x * 2 - 1) < 3  # computed with, never used
            if t < size:
                out[t] = x
        """,
}


@pytest.mark.parametrize("name", list(NEVER_USED))
def test_an_unwritten_value_that_is_never_used_is_not_an_error(name):
    out, a = f32(8, fill=0), f32(6)
    _, failures = run(NEVER_USED[name], 1, 8, out=out, a=a, size=6)
    assert failures == []
    expected = a[:5] + a[1:6] if "neighbour" in name else a
    assert out[:len(expected)].tolist() == expected.tolist()


def use_kernel(use):
    """A kernel whose threads read a never-written cell on line 9 (`x` from the floats `f`, or `k`
    from the ints `n` where `use` names k), then do `use` with it."""
    read = "k = n[t]" if re.search(r"\bk\b", use) else "x = f[t]"
    return "\n".join(["@cuda.jit", "def kernel(out, iout):", "    t = cuda.threadIdx.x",
                      "    f = cuda.shared.array(4, numba.float32)", "    n = cuda.shared.array(4, numba.int32)",
                      "    " + read] + ["    " + line for line in use.split("\n")])


USES = {
    "stored into global memory": "out[t] = x * 2 + 1",
    "through reversed and unary operators, then stored": "y = 1 - abs(-x) ** 2 / 3 + 2 // (x + 1)\nout[t] = y",
    "through divmod, round and floor, then stored": "q, r = divmod(x, 2)\nout[t] = round(q) + math.floor(r)",
    "stored back into shared memory": "f[t] = x + 1",
    "stored into a local array": "loc = cuda.local.array(2, numba.float32)\nloc[0] = x",
    "an int stored into an int array": "iout[t] = k + 1",
    "deciding a branch": "if x > 0:\n    out[t] = 1",
    "deciding through `not`": "out[t] = 1 if not x else 2",
    "a while loop's condition": "while k < 3:\n    k += 1",
    "an array index": "out[k + t] = 1",
    "a loop count": "for j in range(k):\n    out[t] = j",
    "an int() conversion": "j = int(x)",
    "a numba cast": "y = numba.float32(x)",
    "a math function": "y = math.sqrt(x)",
    "max()": "y = max(x, 1.0)",
    "an atomic's operand": "cuda.atomic.add(out, 0, x)",
    "a ballot's predicate": "b = cuda.ballot_sync(0xFFFFFFFF, x > 0)",
    "a barrier vote": "c = cuda.syncthreads_count(x > 0)",
    "a shuffle, then stored by another lane": "y = cuda.shfl_down_sync(0xFFFFFFFF, x, 1)\nout[t] = y",
}


@pytest.mark.parametrize("name", list(USES))
def test_an_unwritten_value_is_reported_where_it_was_read_once_it_is_used(name):
    out, iout = f32(4, fill=0), np.zeros(4, dtype=np.int32)
    _, failures = run(use_kernel(USES[name]), 1, 4, out=out, iout=iout)
    assert kinds(failures) == ["uninitialized_read"], [f.message for f in failures]
    (f,) = failures
    assert f.line == 9 and f.array in ("f", "n")


def test_the_report_names_the_reading_thread_and_the_line_that_used_the_value():
    out = f32(4, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            t = cuda.threadIdx.x
            cache = cuda.shared.array(4, numba.float32)
            x = cache[t]
            y = x * 2
            if t == 2:
                out[t] = y
        """, 1, 4, out=out)
    (f,) = failures
    assert f.kind == "uninitialized_read" and f.line == 8 and f.thread == (2,) and f.count == 1
    assert f.message.startswith("Thread (2,) of block (0,) reads shared array 'cache'[2] on line 8")
    assert "and uses the value on line 11" in f.message


NOT_USES = {
    "printed": "print(x)",
    "formatted": "s = f'{x:.2f}'",
    "shuffled, result unused": "y = cuda.shfl_down_sync(0xFFFFFFFF, x, 1)",
    "compared, result unused": "y = x * 2 + 1 < 3",
}


@pytest.mark.parametrize("name", list(NOT_USES))
def test_an_unwritten_value_passed_on_without_a_decision_is_not_an_error(name):
    out, iout = f32(4, fill=0), np.zeros(4, dtype=np.int32)
    _, failures = run(use_kernel(NOT_USES[name]), 1, 4, out=out, iout=iout)
    assert failures == []


def test_an_atomic_on_a_never_written_cell_reads_unwritten_memory():
    out = f32(1, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            total = cuda.shared.array(1, numba.float32)
            cuda.atomic.add(total, 0, 1.0)
            cuda.syncthreads()
            if cuda.threadIdx.x == 0:
                out[0] = total[0]
        """, 1, 4, out=out)
    assert kinds(failures) == ["uninitialized_read"]
    (f,) = failures
    assert f.line == 7 and f.thread == (0,) and f.array == "total"


def test_a_float_from_unwritten_memory_used_as_a_count_fails_in_plain_words():
    out = f32(4, fill=0)
    _, failures = run(use_kernel("for j in range(x):\n    out[t] = j"), 1, 4, out=out,
                      iout=np.zeros(4, dtype=np.int32))
    assert kinds(failures) == ["runtime_error", "uninitialized_read"]
    (err,) = [f for f in failures if f.kind == "runtime_error"]
    assert err.message.startswith("TypeError: a float cannot be used as an index or a count") and err.line == 10
    assert [f.line for f in failures if f.kind == "uninitialized_read"] == [9]


def test_reading_a_cell_before_another_thread_writes_it_is_still_a_race_not_unwritten_memory():
    out, a = f32(8, fill=0), f32(8)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            s = cuda.shared.array(8, numba.float32)
            t = cuda.threadIdx.x
            if t < 7:
                out[t] = s[t + 1]
            s[t] = a[t]
        """, 1, 8, out=out, a=a)
    assert kinds(failures) == ["race"]


def test_a_read_before_a_syncwarp_of_a_cell_written_after_it_is_unwritten_memory_not_a_race():
    out = f32(32, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            s = cuda.shared.array(32, numba.float32)
            t = cuda.threadIdx.x
            out[t] = s[(t + 1) % 32]
            cuda.syncwarp()
            s[t] = t
        """, 1, 32, out=out)
    assert kinds(failures) == ["uninitialized_read"]
    (f,) = failures
    assert f.line == 8 and f.count == 32


def test_which_unwritten_reads_were_used_survives_the_wire():
    import os

    from tutor.engine.analysis import detect
    from tutor.engine.process import wire

    out, a = f32(4, fill=0), f32(4)
    trace, failures = run("""
        @cuda.jit
        def kernel(out, a):
            t = cuda.threadIdx.x
            cache = cuda.shared.array(4, numba.float32)
            unused = cache[(t + 1) % 4]
            cache[t] += a[t]
            cuda.syncthreads()
            out[t] = cache[t]
        """, 1, 4, out=out, a=a)
    r, w = os.pipe()
    try:
        wire.send(w, {"t": trace})
        (header, _) = wire.receive(r, deadline=None)
    finally:
        os.close(r)
        os.close(w)
    again = header["t"]
    assert again.uninit_used == trace.uninit_used and len(again.events) == len(trace.events)
    assert detect.uninitialized_reads(again, None) == [f for f in failures if f.kind == "uninitialized_read"]
    assert [f.line for f in failures if f.kind == "uninitialized_read"] == [9]


def test_a_childs_list_of_used_reads_that_is_not_indices_with_lines_is_refused():
    import json
    import struct
    import tempfile

    from tutor.engine.process import wire

    bad = {"~c": "Trace", "f": {"grid": {"~t": [1, 1, 1]}, "block": {"~t": [1, 1, 1]}, "events": [],
                                "uninit_used": {"~d": [[0, "line 7"]]}}}
    body = json.dumps(bad).encode()
    with tempfile.TemporaryFile() as f:
        f.write(struct.pack("!Q", len(body)) + body + struct.pack("!Q", 0))
        f.seek(0)
        with pytest.raises(wire.WireError, match="used unwritten reads"):
            wire.receive(f.fileno(), deadline=None)


def test_a_trace_that_did_not_follow_uses_counts_every_unwritten_read():
    from tutor.engine.analysis import detect
    from tutor.engine.trace import UNINIT_READ, ArrayInfo, Trace

    trace = Trace(grid=(1, 1, 1), block=(2, 1, 1), grid_nd=1, block_nd=1,
                  arrays=[ArrayInfo(0, "s", "shared", (2,), "float32", block=(0,), line=5)],
                  events=[(1, UNINIT_READ, 0, 1, None, 7, 0, 0)])
    (f,) = detect.uninitialized_reads(trace, None)
    assert f.line == 7 and f.thread == (1,)


# -- budgets --------------------------------------------------------------------------------------
def test_reading_neighbours_from_global_memory_breaks_the_read_budget():
    out, a = f32(8, fill=0), f32(8)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            i = cuda.threadIdx.x
            acc = a[i]
            if i > 0:
                acc += a[i - 1]
            out[i] = acc
        """, 1, 8, out=out, a=a, _budget={"global_reads": 1, "global_writes": 1})
    (f,) = [f for f in failures if f.kind == "budget_exceeded"]
    assert f.count == 7 and "2 global reads" in f.message and "a[0] (line 9)" in f.message


def test_accumulating_in_out_counts_reads_and_writes_of_out():
    out, a = f32(1, fill=0), f32(4)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            if cuda.threadIdx.x == 0:
                for k in range(4):
                    out[0] = out[0] + a[k]
        """, 1, 4, out=out, a=a, _budget={"global_reads": 2, "global_writes": 1})
    got = {f.details[0]["budget"] for f in failures if f.kind == "budget_exceeded"}
    assert got == {"global_reads", "global_writes"}


def test_shared_size_budget():
    out = f32(8, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            s = cuda.shared.array(64, numba.float32)
            t = cuda.threadIdx.x
            s[t] = 1
            cuda.syncthreads()
            out[t] = s[t]
        """, 1, 8, out=out, _budget={"shared_size": 8})
    (f,) = [f for f in failures if f.kind == "budget_exceeded"]
    assert "64 elements" in f.message


# -- errors and time ------------------------------------------------------------------------------
def test_python_error_names_thread_and_line():
    out = f32(4, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            t = cuda.threadIdx.x
            out[t] = 1 / (t - 2)
        """, 1, 4, out=out)
    (f,) = failures
    assert f.kind == "runtime_error" and f.thread == (2,) and f.line == 7 and "ZeroDivisionError" in f.message


def test_endless_loop_times_out_at_its_line():
    out = f32(4, fill=0)
    source = "from numba import cuda\n@cuda.jit\ndef kernel(out):\n    i = 0\n    while i < 10:\n        out[0] = 1\n"
    _, failures = simulate(source, 1, 4, [("out", out)], timeout=0.3)
    (f,) = [f for f in failures if f.kind == "timeout"]
    assert f.thread == (0,) and f.line in (5, 6)


def test_unsupported_cuda_feature_is_named():
    out = f32(4, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            out[0] = cuda.match_any_sync(0xFFFFFFFF, 8)
        """, 1, 1, out=out)
    (f,) = failures
    assert f.kind == "unsupported" and "cuda.match_any_sync" in f.message


def test_sys_exit_in_a_kernel_is_a_runtime_error():
    out = f32(4, fill=0)
    _, failures = run("""
        import sys

        @cuda.jit
        def kernel(out):
            sys.exit(3)
        """, 1, 2, out=out)
    assert kinds(failures) == ["runtime_error"] and "SystemExit" in failures[0].message


@pytest.mark.parametrize("op,expected", [
    ("cuda.shfl_down_sync(0xffffffff, v, 1)", [float(min(i + 1, 31)) if i < 31 else 31.0 for i in range(32)]),
    ("cuda.shfl_up_sync(0xffffffff, v, 2)", [float(i - 2) if i >= 2 else float(i) for i in range(32)]),
    ("cuda.shfl_xor_sync(0xffffffff, v, 1)", [float(i ^ 1) for i in range(32)]),
    ("cuda.shfl_sync(0xffffffff, v, 5)", [5.0] * 32),
    ("cuda.ballot_sync(0xffffffff, v < 3)", [7.0] * 32),
    ("cuda.all_sync(0xffffffff, v < 40)", [1.0] * 32),
    ("cuda.any_sync(0xffffffff, v > 30)", [1.0] * 32),
])
def test_warp_primitives(op, expected):
    out = f32(32, fill=0)
    _, failures = run(f"""
        @cuda.jit
        def kernel(out):
            v = numba.float32(cuda.laneid)
            out[cuda.threadIdx.x] = {op}
        """, 1, 32, out=out)
    assert failures == []
    assert out.tolist() == expected


def test_warp_shuffle_reduction():
    out, a = f32(2, fill=0), f32(64)
    _, failures = run("""
        @cuda.jit
        def kernel(out, a):
            i = cuda.grid(1)
            v = a[i]
            off = 16
            while off > 0:
                v += cuda.shfl_down_sync(0xffffffff, v, off)
                off //= 2
            if cuda.laneid == 0:
                out[cuda.blockIdx.x] = v
        """, 2, 32, out=out, a=a)
    assert failures == []
    assert out.tolist() == [a[:32].sum(), a[32:].sum()]


def test_device_functions_local_and_const_arrays_and_casts():
    out, a = f32(4, fill=0), f32(4)
    _, failures = run("""
        @cuda.jit(device=True)
        def twice(x):
            return x * 2

        @cuda.jit
        def kernel(out, a):
            i = cuda.grid(1)
            tmp = cuda.local.array(2, numba.float32)
            tmp[0] = twice(a[i])
            tmp[1] = math.sqrt(4.0)
            out[i] = numba.float32(tmp[0] + tmp[1])
        """, 1, 4, out=out, a=a)
    assert failures == []
    assert out.tolist() == [2, 4, 6, 8]


def test_atomic_variants_return_old_values():
    out = np.zeros(6, dtype=np.int32)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            t = cuda.threadIdx.x
            cuda.atomic.add(out, 0, 1)
            cuda.atomic.max(out, 1, t)
            cuda.atomic.min(out, 2, -t)
            cuda.atomic.sub(out, 3, 2)
            if t == 0:
                old = cuda.atomic.exch(out, 4, 7)
                out[5] = cuda.atomic.cas(out, 4, 7, 9) + old
        """, 1, 4, out=out)
    assert failures == []
    assert out.tolist() == [4, 3, -3, -8, 9, 7]


def test_grid3_gridsize_const_arrays_and_barrier_votes():
    out = f32(2, 2, 2, fill=0)
    votes = np.zeros(3, dtype=np.int32)
    _, failures = run("""
        import numpy as np
        TABLE = np.array([1.0, 2.0], dtype=np.float32)

        @cuda.jit
        def kernel(out, votes):
            i, j, k = cuda.grid(3)
            nx, ny, nz = cuda.gridsize(3)
            table = cuda.const.array_like(TABLE)
            out[i, j, k] = table[k] + nx * 100
            t = cuda.threadIdx.x + cuda.threadIdx.y * 2 + cuda.threadIdx.z * 4
            all_small = cuda.syncthreads_and(t < 8)
            any_zero = cuda.syncthreads_or(t == 0)
            if t == 0:
                votes[0] = all_small
                votes[1] = any_zero
                votes[2] = nz
        """, (1, 1, 1), (2, 2, 2), out=out, votes=votes)
    assert failures == []
    assert out[:, :, 0].tolist() == [[201, 201], [201, 201]] and out[0, 0, 1] == 202
    assert votes.tolist() == [1, 1, 2]


def test_kernel_launch_syntax_works_inside_the_simulator():
    from tutor.engine.loading.sim_loader import load_for_sim

    module = load_for_sim("from numba import cuda\n@cuda.jit\ndef kernel(out):\n    out[cuda.grid(1)] = 7\n",
                          "k.py")
    out = f32(6, fill=0)
    module.kernel[2, 3](out)
    assert out.tolist() == [7] * 6


def test_float32_cast_rounds_like_a_gpu():
    out = np.zeros(1, dtype=np.float64)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            out[0] = numba.float32(0.1)
        """, 1, 1, out=out)
    assert failures == [] and out[0] == float(np.float32(0.1)) and out[0] != 0.1


# -- warp votes per lane group, integer wrap, same-value writes, dynamic shared memory -----------
def test_two_half_warps_each_voting_with_their_own_mask_in_an_if_else_do_not_diverge():
    out = np.zeros(32, dtype=np.int64)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            lane = cuda.laneid
            if lane < 16:
                b = cuda.ballot_sync(0x0000FFFF, lane % 2 == 0)
            else:
                b = cuda.ballot_sync(0xFFFF0000, lane % 4 == 0)
            out[cuda.threadIdx.x] = b
        """, 1, 32, out=out)
    assert failures == []
    assert out.tolist() == [0x5555] * 16 + [0x11110000] * 16


def test_half_warp_masks_on_one_line_vote_only_among_their_own_lanes():
    out = np.zeros((3, 32), dtype=np.int64)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            lane = cuda.laneid
            m = 0x0000FFFF if lane < 16 else 0xFFFF0000
            out[0, lane] = cuda.ballot_sync(m, lane % 2 == 0)
            out[1, lane] = cuda.all_sync(m, lane < 16)
            out[2, lane] = cuda.any_sync(m, lane == 20)
        """, 1, 32, out=out)
    assert failures == []
    assert out[0].tolist() == [0x5555] * 16 + [0x55550000] * 16
    assert out[1].tolist() == [1] * 16 + [0] * 16
    assert out[2].tolist() == [0] * 16 + [1] * 16


def test_shuffles_with_half_warp_masks_read_only_their_own_half():
    out = f32(2, 32, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            lane = cuda.laneid
            v = numba.float32(lane)
            if lane < 16:
                out[0, lane] = cuda.shfl_sync(0x0000FFFF, v, 3)
            else:
                out[0, lane] = cuda.shfl_sync(0xFFFF0000, v, 20)
            m = 0x0000FFFF if lane < 16 else 0xFFFF0000
            off = 8
            while off > 0:
                v += cuda.shfl_down_sync(m, v, off)
                off //= 2
            out[1, lane] = v
        """, 1, 32, out=out)
    assert failures == []
    assert out[0].tolist() == [3.0] * 16 + [20.0] * 16
    assert out[1, 0] == sum(range(16)) and out[1, 16] == sum(range(16, 32))


def test_lanes_of_one_mask_at_two_different_primitives_still_diverge():
    out = np.zeros(32, dtype=np.int64)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            lane = cuda.laneid
            if lane < 8:
                b = cuda.ballot_sync(0x0000FFFF, True)
            elif lane < 16:
                b = cuda.ballot_sync(0x0000FFFF, False)
            else:
                b = cuda.ballot_sync(0xFFFF0000, True)
            out[lane] = b
        """, 1, 32, out=out)
    (f,) = [f for f in failures if f.kind == "barrier_divergence"]
    assert f.line in (8, 10) and "(ballot on line 8, ballot on line 10)" in f.message


def test_lanes_named_by_a_mask_that_call_with_another_mask_diverge():
    out = np.zeros(32, dtype=np.int64)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            lane = cuda.laneid
            m = 0xFFFFFFFF if lane == 0 else 0xFFFFFFFE
            out[lane] = cuda.ballot_sync(m, True)
        """, 1, 32, out=out)
    (f,) = [f for f in failures if f.kind == "barrier_divergence"]
    assert "mask 0xffffffff" in f.message and "mask 0xfffffffe" in f.message


def test_integers_too_big_for_an_int32_or_uint32_array_wrap_as_on_a_gpu():
    out = np.zeros(3, dtype=np.int32)
    flags = np.zeros(2, dtype=np.uint32)
    _, failures = run("""
        @cuda.jit
        def kernel(out, flags):
            out[0] = 2 ** 31 + 5
            out[1] = 70000 * 70000
            out[2] = -(2 ** 31) - 1
            flags[0] = -1
            flags[1] = 2 ** 32 + 3
        """, 1, 1, out=out, flags=flags)
    assert failures == []
    assert out.tolist() == [-(2 ** 31) + 5, 70000 * 70000 - 2 ** 32, 2 ** 31 - 1]
    assert flags.tolist() == [2 ** 32 - 1, 3]


def test_an_overflowing_histogram_still_gets_a_json_verdict(tmp_path):
    import json
    import os
    import subprocess
    import sys

    path = tmp_path / "histogram.py"
    path.write_text(textwrap.dedent("""
        from numba import cuda

        @cuda.jit
        def kernel(out, a, size):
            i = cuda.grid(1)
            if i < 8 and cuda.blockIdx.x == 0:
                out[i] = 2 ** 31 + i
        """))
    proc = subprocess.run([sys.executable, "-m", "tutor.cli", "check", "histogram", str(path), "--json"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "GPU_TUTOR_NO_GPU": "1"})
    verdict = json.loads(proc.stdout)
    assert proc.returncode == 1 and verdict["passed"] is False
    assert verdict["failures"][0]["kind"] == "wrong_output"


def test_every_thread_writing_the_same_value_is_a_race_whose_advice_is_one_writer():
    out = f32(8, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            out[0] = 1.0
        """, 1, 8, out=out)
    (f,) = failures
    assert f.kind == "race" and f.array == "out" and f.line == 6
    assert f.message == (
        "Thread (0,) of block (0,) writes out[0] on line 6 and thread (1,) writes the same value (1) to it "
        "on line 6, with no barrier between them (both in barrier phase 0). The result looks right, but on a "
        "GPU this is still a race, and every thread pays for a write that one thread can do: let one thread "
        "write it, e.g. under `if cuda.threadIdx.x == 0:`.")


def test_a_shared_flag_that_every_thread_sets_is_advised_one_writer_not_a_barrier():
    out = np.zeros(8, dtype=np.int32)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            flag = cuda.shared.array(1, numba.int32)
            flag[0] = 1
            cuda.syncthreads()
            out[cuda.threadIdx.x] = flag[0]
        """, 1, 8, out=out)
    (f,) = failures
    assert f.kind == "race" and f.array == "flag"
    assert "let one thread write it" in f.message and "if cuda.threadIdx.x == 0:" in f.message
    assert "atomic" not in f.message and "put a cuda.syncthreads()" not in f.message


def test_same_value_written_and_read_in_one_phase_asks_for_one_writer_then_a_barrier():
    out = f32(8, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            s = cuda.shared.array(1, numba.float32)
            s[0] = 2.0
            out[cuda.threadIdx.x] = s[0]
        """, 1, 8, out=out)
    (f,) = failures
    assert "let one thread write it" in f.message and "then a cuda.syncthreads() before the other threads read it" \
        in f.message


def test_blocks_writing_the_same_value_to_one_cell_are_advised_one_writer():
    out = f32(1, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            out[0] = 3.0
        """, 2, 4, out=out)
    races = [f for f in failures if f.kind == "race"]
    assert races and all("let one thread of the grid write it" in f.message for f in races)
    assert all("atomic" not in f.message for f in races)


def test_threads_writing_different_values_to_one_cell_keep_the_barrier_advice():
    out = f32(1, fill=0)
    _, failures = run("""
        @cuda.jit
        def kernel(out):
            out[0] = cuda.threadIdx.x // 4
        """, 1, 8, out=out)
    (f,) = failures
    assert f.kind == "race" and "or use an atomic." in f.message and "one thread" not in f.message


def launch_with_dynamic_shared(src, config, *args, budget=None):
    """Launch as host code does, kernel[grid, block, stream, nbytes](...): (trace, failures)."""
    from tutor.engine.analysis import detect
    from tutor.engine.loading.sim_loader import load_for_sim
    from tutor.engine.sim.launch import records
    from tutor.engine.verdict import failure_from_dict

    source = "from numba import cuda\nimport numba\n" + textwrap.dedent(src).lstrip("\n")
    module = load_for_sim(source, "k.py")
    with records(module.cuda) as rec:
        module.kernel[config](*args)
    ((trace, failures),) = rec.traces
    return trace, [failure_from_dict(f) for f in failures] + detect.find_all(trace, None, budget)


DYNAMIC_REVERSE = """
    @cuda.jit
    def kernel(out, a):
        fwd = cuda.shared.array(0, numba.float32)
        back = cuda.shared.array(0, dtype=numba.float32)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        fwd[t] = a[i]
        cuda.syncthreads()
        out[i] = back[cuda.blockDim.x - 1 - t]
    """


def test_every_dynamic_shared_array_of_a_launch_is_one_per_block_buffer_of_nbytes():
    out, a = f32(16, fill=0), f32(16)
    trace, failures = launch_with_dynamic_shared(DYNAMIC_REVERSE, (2, 8, 0, 8 * 4), out, a)
    assert failures == []
    assert out.tolist() == list(range(7, -1, -1)) + list(range(15, 7, -1))
    shared = [info for info in trace.arrays if info.space == "shared"]
    assert [(info.shape, info.block) for info in shared] == [((8,), (0,)), ((8,), (1,))]


def test_a_launch_may_name_the_stream_without_dynamic_shared_memory():
    out = f32(4, fill=0)
    _, failures = launch_with_dynamic_shared("""
        @cuda.jit
        def kernel(out):
            out[cuda.grid(1)] = 2.0
        """, (2, 2, 0), out)
    assert failures == [] and out.tolist() == [2.0] * 4


def test_dynamic_shared_memory_is_bounds_checked_at_nbytes_over_the_itemsize():
    out, a = f32(8, fill=0), f32(8)
    _, failures = launch_with_dynamic_shared(DYNAMIC_REVERSE, (1, 8, 0, 4 * 4), out, a)
    oob = [f for f in failures if f.kind == "out_of_bounds"]
    assert oob and "(4,)" in oob[0].message and oob[0].thread == (4,)


@pytest.mark.parametrize("config", [(1, 8), (1, 8, 0), (1, 8, 0, 0)])
def test_dynamic_shared_memory_without_bytes_is_out_of_bounds(config):
    out, a = f32(8, fill=0), f32(8)
    _, failures = launch_with_dynamic_shared(DYNAMIC_REVERSE, config, out, a)
    assert any(f.kind == "out_of_bounds" and "(0,)" in f.message for f in failures)


def test_dynamic_shared_memory_starts_poisoned_and_its_aliases_race():
    out = f32(8, fill=0)
    _, failures = launch_with_dynamic_shared("""
        @cuda.jit
        def kernel(out):
            s = cuda.shared.array(0, numba.float32)
            alias = cuda.shared.array(0, numba.float32)
            t = cuda.threadIdx.x
            if t < 4:
                s[t] = 1.0
            out[t] = alias[(t + 1) % 8]
        """, (1, 8, 0, 32), out)
    assert {"race", "uninitialized_read"} <= set(kinds(failures))


def test_the_shared_size_budget_counts_dynamic_shared_memory():
    out, a = f32(8, fill=0), f32(8)
    _, failures = launch_with_dynamic_shared(DYNAMIC_REVERSE, (1, 8, 0, 64 * 4), out, a,
                                             budget={"shared_size": 8})
    (f,) = [f for f in failures if f.kind == "budget_exceeded"]
    assert "64 elements" in f.message


def test_dynamic_shared_arrays_of_two_dtypes_are_named_as_unsupported():
    out = f32(8, fill=0)
    _, failures = launch_with_dynamic_shared("""
        @cuda.jit
        def kernel(out):
            f = cuda.shared.array(0, numba.float32)
            n = cuda.shared.array(0, numba.int32)
            out[0] = 1.0
        """, (1, 1, 0, 32), out)
    (f,) = failures
    assert f.kind == "unsupported" and "float32" in f.message and "int32" in f.message


# (a float size, 1.5, is no longer here: an H100 accepts it, so the simulator does too; see host_api_catalogue)
@pytest.mark.parametrize("config, words", [((1, 8, 0, -4), "dynamic shared memory"),
                                           ((1, 8, 0, 32, 1), "kernel[blocks, threads")])
def test_a_bad_launch_configuration_is_a_plain_error(config, words):
    from tutor.engine.loading.sim_loader import load_for_sim

    module = load_for_sim("from numba import cuda\n@cuda.jit\ndef kernel(out):\n    pass\n", "k.py")
    from tutor.engine.sim.hostapi import CUDAError

    with pytest.raises((TypeError, ValueError, CUDAError), match=words.replace("[", r"\[")):  # as numba-cuda says
        module.kernel[config](f32(1))


def test_a_wrapped_integer_is_what_the_kernel_reads_back_as_on_a_gpu():
    out = np.zeros(2, dtype=np.int32)
    counts = np.zeros((1, 1), dtype=np.uint8)
    _, failures = run("""
        @cuda.jit
        def kernel(out, counts):
            out[0] = 2 ** 31 + 5
            out[1] = out[0] // 2          # reads the wrapped value: -(2**31 - 5) // 2
            counts[0, 0] = 255
            counts[0, 0] = counts[0, 0] + 1
        """, 1, 1, out=out, counts=counts)
    assert failures == []
    assert out.tolist() == [-(2 ** 31) + 5, (-(2 ** 31) + 5) // 2] and counts.tolist() == [[0]]
