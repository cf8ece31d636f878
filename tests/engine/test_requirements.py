"""A puzzle's [require] table judged on the trace: each requirement, the kernels it must pass and
the words it fails the others with."""

import textwrap

import numpy as np

from tutor.engine.judge import simulate

HEAD = "from numba import cuda\nimport numba\n\nTPB = 4\n\n\n"


def run(src, blocks, threads, require, **arrays):
    source = HEAD + textwrap.dedent(src).lstrip("\n")
    return simulate(source, blocks, threads, list(arrays.items()), require=require)


def technique(failures):
    return [f for f in failures if f.kind == "technique_missing"]


def vec(n, fill=None):
    return np.arange(n, dtype=np.float32) if fill is None else np.full(n, fill, dtype=np.float32)


LOAD_BARRIER_USE = """
    @cuda.jit
    def kernel(out, a, size):
        shared = cuda.shared.array(TPB, numba.float32)
        i = cuda.grid(1)
        t = cuda.threadIdx.x
        shared[t] = a[i] if i < size else 0
        cuda.syncthreads()
        if i < size:
            out[i] = shared[t] + 10
    """


# -- shared ----------------------------------------------------------------------------------------
def test_load_barrier_use_meets_after_barrier_even_reading_its_own_cell():
    _, failures = run(LOAD_BARRIER_USE, 2, 4, {"shared": "after_barrier"}, out=vec(6, 0), a=vec(6), size=6)
    assert technique(failures) == []


def test_a_kernel_without_shared_memory_is_told_what_the_puzzle_practises():
    _, failures = run("""
        @cuda.jit
        def kernel(out, a, size):
            i = cuda.grid(1)
            if i < size:
                out[i] = a[i] + 10
        """, 2, 4, {"shared": "after_barrier"}, out=vec(6, 0), a=vec(6), size=6)
    (f,) = technique(failures)
    assert f.message == (
        "Thread (0,) of block (0,) writes out[0] on line 11, but it read nothing from shared memory before "
        "that. 5 other thread(s) did the same. The answer may be right, but it skips the point. This puzzle "
        "practises passing values through shared memory: write them to a shared array, wait at "
        "cuda.syncthreads(), then compute what you write from what you read back.")
    assert (f.thread, f.block, f.line, f.count, f.array) == ((0,), (0,), 11, 6, "out")


def test_reading_shared_memory_in_the_phase_it_was_written_is_no_barrier():
    _, failures = run("""
        @cuda.jit
        def kernel(out, a, size):
            shared = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            t = cuda.threadIdx.x
            shared[t] = a[i]
            out[i] = shared[t] + 10
            cuda.syncthreads()
        """, 1, 4, {"shared": "after_barrier"}, out=vec(4, 0), a=vec(4), size=4)
    (f,) = technique(failures)
    assert f.message.startswith(
        "Thread (0,) of block (0,) writes out[0] on line 13, but every shared cell it read before that was "
        "written in the same barrier phase: no cuda.syncthreads() stood between the write and the read. "
        "3 other thread(s) did the same. This puzzle practises passing values")


def test_from_other_threads_refuses_a_block_whose_threads_read_back_only_their_own_cells():
    _, failures = run(LOAD_BARRIER_USE, 1, 4, {"shared": "from_other_threads"}, out=vec(4, 0), a=vec(4), size=4)
    (f,) = technique(failures)
    assert f.message == (
        "Thread (0,) of block (0,) writes out[0] on line 15, but after the barrier it read only shared cells "
        "it had written itself. 3 other thread(s) did the same. This puzzle is about threads sharing their "
        "work: after the barrier, read the cells that the other threads of the block wrote.")


def test_from_other_threads_passes_a_reduction_whose_writer_reads_the_others_cells():
    _, failures = run("""
        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            t = cuda.threadIdx.x
            cache[t] = a[t]
            cuda.syncthreads()
            if t == 0:
                total = numba.float32(0)
                for k in range(TPB):
                    total += cache[k]
                out[0] = total
        """, 1, 4, {"shared": "from_other_threads", "out_cell_writes_per_block": 1}, out=vec(1, 0), a=vec(4),
        size=4)
    assert technique(failures) == []


def test_a_cell_counted_into_by_shared_atomics_before_the_barrier_is_read_after_it():
    _, failures = run("""
        @cuda.jit
        def kernel(out, a, size):
            bins = cuda.shared.array(TPB, numba.int32)
            t = cuda.threadIdx.x
            cuda.atomic.add(bins, 0, 1)
            cuda.syncthreads()
            if t == 0:
                out[0] = bins[0]
        """, 1, 4, {"shared": "from_other_threads"}, out=np.zeros(1, np.int32), a=vec(4), size=4)
    assert technique(failures) == []


# -- out_cell_writes_per_block ---------------------------------------------------------------------
def test_one_atomic_per_thread_writes_a_cell_of_out_once_per_thread_not_once_per_block():
    _, failures = run("""
        @cuda.jit
        def kernel(out, a, size):
            i = cuda.grid(1)
            cuda.atomic.add(out, cuda.blockIdx.x, a[i])
        """, 2, 4, {"out_cell_writes_per_block": 1}, out=vec(2, 0), a=vec(8), size=8)
    (f,) = technique(failures)
    assert f.message == (
        "Block (0,) writes out[0] 4 times (thread(s) (0,), (1,), (2,), (3,), on line 10); this puzzle asks "
        "each block to write each cell of out once (an atomic counts as a write). 1 other cell(s) are written "
        "too often as well. The answer may be right, but the point is to combine the block's values inside "
        "the block first, then let one thread write the result.")
    assert f.details == [{"requirement": "out_cell_writes_per_block", "limit": 1, "used": 4}]


def test_one_write_per_block_into_a_shared_total_is_allowed():
    _, failures = run("""
        @cuda.jit
        def kernel(out, a, size):
            if cuda.threadIdx.x == 0:
                cuda.atomic.add(out, 0, a[cuda.blockIdx.x])
        """, 3, 4, {"out_cell_writes_per_block": 1}, out=vec(1, 0), a=vec(3), size=3)
    assert technique(failures) == []


# -- coalesced -------------------------------------------------------------------------------------
TRANSPOSE_HEAD = """
    @cuda.jit
    def kernel(out, a, rows, cols):
        col = cuda.blockIdx.x * 4 + cuda.threadIdx.x
        row = cuda.blockIdx.y * 4 + cuda.threadIdx.y
    """


def test_a_naive_transpose_writes_down_a_column():
    _, failures = run(TRANSPOSE_HEAD + """
        if row < rows and col < cols:
            out[col, row] = a[row, col]
    """, (1, 1), (4, 4), {"coalesced": True}, out=np.zeros((4, 4), np.float32),
        a=np.arange(16, dtype=np.float32).reshape(4, 4), rows=4, cols=4)
    (f,) = technique(failures)
    assert f.message == (
        "Threads (0, 0) and (1, 0) of block (0, 0), neighbours along x, write out[0, 0] and out[1, 0] on "
        "line 13: 4 elements apart in memory. 11 other pair(s) of neighbours did the same. This puzzle "
        "practises coalescing: neighbouring threads of a warp should touch neighbouring elements, when they "
        "read and when they write. Let threadIdx.x run along the last index of out, and where the data must "
        "change places, let it do so in shared memory.")
    assert (f.array, f.other_thread, f.line) == ("out", (1, 0), 13)


def test_a_tiled_transpose_is_coalesced_on_both_sides():
    _, failures = run("""
        @cuda.jit
        def kernel(out, a, rows, cols):
            tile = cuda.shared.array((4, 5), numba.float32)
            tx = cuda.threadIdx.x
            ty = cuda.threadIdx.y
            tile[ty, tx] = a[ty, tx]
            cuda.syncthreads()
            out[ty, tx] = tile[tx, ty]
        """, (1, 1), (4, 4), {"coalesced": True, "shared": "after_barrier"}, out=np.zeros((4, 4), np.float32),
        a=np.arange(16, dtype=np.float32).reshape(4, 4), rows=4, cols=4)
    assert technique(failures) == []


def test_a_missing_barrier_that_races_is_told_once_by_the_race_report():
    _, failures = run("""
        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            t = cuda.threadIdx.x
            cache[t] = a[t]
            if t == 0:
                out[0] = cache[0] + cache[1] + cache[2] + cache[3]
        """, 1, 4, {"shared": "from_other_threads"}, out=vec(1, 0), a=vec(4), size=4)
    assert "race" in {f.kind for f in failures} and technique(failures) == []
