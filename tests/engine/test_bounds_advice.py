"""Out-of-bounds advice in the kernel's own words: the index expression that went out, the dimension,
and what bounds it (the parameter that holds the length, the array's shape, the shared array's
constant), or, where no parameter holds the length, that a guard is not the fix.

Before, every out-of-bounds access was told to `guard with if i < size:`, in puzzles with no `size`
and for a row index already guarded while the column ran out."""

import os
import textwrap

import numpy as np

from tutor.engine.process import wire
from tutor.engine.judge import check_sim, simulate


def oob(src, blocks, threads, **args):
    source = "from numba import cuda\nimport numba\n\nTPB = 4\n\n\n" + textwrap.dedent(src).lstrip("\n")
    trace, failures = simulate(source, blocks, threads, list(args.items()))
    return trace, [f for f in failures if f.kind == "out_of_bounds"]


def f32(*shape):
    return np.zeros(shape, dtype=np.float32)


def test_map_has_no_size_so_the_advice_says_the_index_itself_is_off(catalog):
    source = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    local_i = cuda.threadIdx.x\n"
              "    out[local_i] = a[local_i + 1] + 10\n")
    verdict = check_sim(catalog.get("map"), source, "kernel.py", seed=1, compile=False).verdict
    (f,) = [f for f in verdict.failures if f.kind == "out_of_bounds"]
    assert "size" not in f.message
    assert f.message.endswith(
        "Here `local_i + 1` is 4, and a has 4 elements. No parameter of the kernel holds that length, and "
        "the launch has one thread per element, so a guard is not the fix: the index itself is off. Check how "
        "`local_i + 1` is computed from the thread's position.")


def test_with_the_row_guarded_the_advice_names_the_column():
    _, (read, write) = oob("""
        @cuda.jit
        def kernel(out, a, size):
            i = cuda.threadIdx.x
            j = cuda.threadIdx.y
            if i < size:
                out[i, j] = a[i, j] + 10
        """, (1, 1), (3, 3), out=f32(2, 2), a=f32(2, 2), size=2)
    assert read.array == "a" and read.message.endswith(
        "Here `j`, the index along dimension 1, is 2, and a has 2 elements along it (`size` holds that "
        "length): guard the access with `if j < size:`.")
    assert "i < size" not in read.message and "`if j < size:`" in write.message


def test_both_indices_are_named_where_both_run_out():
    _, failures = oob("""
        @cuda.jit
        def kernel(out, a, size):
            i = cuda.threadIdx.x
            j = cuda.threadIdx.y
            out[i, j] = a[i, j]
        """, (1, 1), (3, 3), out=f32(2, 2), a=f32(2, 2), size=2)
    assert all(f.message.endswith("guard the access with `if i < size and j < size:`.") for f in failures)


def test_the_bound_is_the_kernels_own_name_for_the_length():
    _, (f, _) = oob("""
        @cuda.jit
        def kernel(out, a, n):
            k = cuda.grid(1)
            out[k] = a[k]
        """, 1, 8, out=f32(5), a=f32(5), size=5)
    assert "(`n` holds that length): guard the access with `if k < n:`." in f.message


def test_an_atomic_past_the_end_names_its_index_argument():
    _, (f,) = oob("""
        @cuda.jit
        def kernel(out, a, size):
            i = cuda.threadIdx.x
            cuda.atomic.add(out, i * 2, 1)
        """, 1, 4, out=f32(4), a=f32(4), size=4)
    assert f.message.endswith("Here `i * 2` is 4, and out has 4 elements (`size` holds that length): guard "
                              "the access with `if i * 2 < size:`.")


def test_a_negative_index_is_told_to_stay_at_zero_or_above_for_every_access_on_the_line():
    _, (f,) = oob("""
        @cuda.jit
        def kernel(out, a, size):
            i = cuda.threadIdx.x
            out[i] = a[i] + a[i - 1] + a[i - 2]
        """, 1, 4, out=f32(4), a=f32(4), size=4)
    assert f.message.endswith("Here `i - 1` is -1: guard the access so that it never goes below 0 "
                              "(e.g. `if i - 1 >= 0 and i - 2 >= 0:`).")


def test_a_shared_array_indexed_by_the_grid_is_told_its_constant_and_the_thread_index():
    _, (f,) = oob("""
        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            cache[i] = a[i]
        """, 2, 4, out=f32(8), a=f32(8), size=8)
    assert f.message.endswith(
        "Here `i` is 4, and shared array 'cache' of block (1,) has 4 cells. Keep `i` below TPB (4): a shared "
        "array belongs to one block, so index it by the thread's place in the block (cuda.threadIdx), not its "
        "place in the grid.")


def test_two_parameters_of_the_same_length_are_both_named_and_the_shape_is_the_bound():
    _, (f,) = oob("""
        @cuda.jit
        def kernel(out, a, rows, cols):
            r = cuda.threadIdx.y
            c = cuda.threadIdx.x
            out[r, c] = a[r, c]
        """, (1, 1), (5, 4), out=f32(5, 5), a=f32(4, 4), rows=4, cols=4)
    assert f.array == "a" and "`rows`, `cols` all hold 4 in this config" in f.message
    assert f.message.endswith("guard the access with `if c < a.shape[1]:`.")


def test_swapped_indices_are_asked_about_before_a_guard_is_offered():
    _, (f,) = oob("""
        @cuda.jit
        def kernel(out, a, size):
            row = cuda.blockIdx.y
            col = cuda.threadIdx.x
            if col < size:
                out[row, 0] = a[col, row]
        """, (1, 2), 6, out=f32(2, 1), a=f32(2, 6), size=6)
    assert f.message.endswith(
        "Here `col`, the index along dimension 0, is 2, and a has 2 elements along it. No parameter of the "
        "kernel holds that length, but `size` holds its length along dimension 1: are the indices in the right "
        "order? If they are, guard the access with `if col < a.shape[0]:`.")


def test_a_dimension_of_one_element_has_only_index_zero():
    _, (f,) = oob("""
        @cuda.jit
        def kernel(out, a, b, size):
            i = cuda.threadIdx.x
            j = cuda.threadIdx.y
            if i < size and j < size:
                out[i, j] = a[i, 0] + b[i, 0]
        """, (1, 1), (3, 3), out=f32(2, 2), a=f32(2, 1), b=f32(1, 2), size=2)
    assert f.array == "b" and f.message.endswith(
        "Here `i`, the index along dimension 0, is 1, and b has 1 element along it, so the only index there is 0.")


def test_the_noted_access_text_and_the_kernels_names_survive_the_wire():
    trace, _ = oob("""
        @cuda.jit
        def kernel(out, a, size):
            i = cuda.threadIdx.x
            out[i] = a[i + 1]
        """, 1, 4, out=f32(4), a=f32(4), size=4)
    assert sorted(trace.oob_code.values()) == ["a[i + 1]"] and trace.scalars == {"size": 4}
    assert trace.constants == {"TPB": 4}
    read, write = os.pipe()
    try:
        wire.send(write, {"trace": trace})
        got, _ = wire.receive(read)
    finally:
        os.close(read)
        os.close(write)
    assert got["trace"].oob_code == trace.oob_code and got["trace"].scalars == {"size": 4}
