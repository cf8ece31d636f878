"""Each detection, with tiny kernels that should and should not trigger it."""

import textwrap

import numpy as np
import pytest

from tutor.engine.check import simulate


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
            out[0] = cuda.cbrt(8.0)
        """, 1, 1, out=out)
    (f,) = failures
    assert f.kind == "unsupported" and "cuda.cbrt" in f.message


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
    from tutor.engine.loader import load_for_sim

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
