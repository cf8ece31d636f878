"""Each puzzle asks for what its lesson teaches, not only for the right answer.

Every kernel here writes the right output and passed its puzzle before the puzzle's [budget] and
[require] tables were tightened: a plain copy for `shared`, one atomic per thread for a reduction, a
shuffle scan where the lesson is shared memory, a naive transpose, one thread looping over the whole
array. Each must now fail, with the kind that names what it skipped. The last tests keep the one
pretence the trace cannot see, so that a change that closes it is noticed (and this file updated).
"""

import textwrap

import pytest

from tutor.engine.judge import check_sim

SEEDS = (1, 2)


def kernel(source):
    return textwrap.dedent(source).lstrip("\n")


def case(pid, name, kind, source):
    return pytest.param(pid, kind, kernel(source), id=f"{pid}-{name}")


def serial(signature, body):
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return f"from numba import cuda\n\n\n@cuda.jit\ndef kernel({signature}):\n{body}\n"


CHEATS = [
    # -- one thread does the whole array: the first puzzles teach one thread per element ----------
    pytest.param("map", "budget_exceeded", serial("out, a", """
        if cuda.threadIdx.x == 0:
            for k in range(out.shape[0]):
                out[k] = a[k] + 10
        """), id="map-one_thread_loops"),
    pytest.param("zip", "budget_exceeded", serial("out, a, b", """
        if cuda.threadIdx.x == 0:
            for k in range(out.shape[0]):
                out[k] = a[k] + b[k]
        """), id="zip-one_thread_loops"),
    pytest.param("guard", "budget_exceeded", serial("out, a, size", """
        if cuda.threadIdx.x == 0:
            for k in range(size):
                out[k] = a[k] + 10
        """), id="guard-one_thread_loops_instead_of_guarding"),
    pytest.param("map2d", "budget_exceeded", serial("out, a, size", """
        if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
            for i in range(size):
                for j in range(size):
                    out[i, j] = a[i, j] + 10
        """), id="map2d-one_thread_loops"),
    pytest.param("broadcast", "budget_exceeded", serial("out, a, b, size", """
        if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
            for i in range(size):
                for j in range(size):
                    out[i, j] = a[i, 0] + b[0, j]
        """), id="broadcast-one_thread_loops"),
    pytest.param("blocks", "budget_exceeded", serial("out, a, size", """
        if cuda.blockIdx.x == 0:
            k = cuda.threadIdx.x
            while k < size:
                out[k] = a[k] + 10
                k += cuda.blockDim.x
        """), id="blocks-block_0_strides_over_everything"),
    pytest.param("blocks2d", "budget_exceeded", serial("out, a, size", """
        if cuda.threadIdx.x + cuda.threadIdx.y + cuda.blockIdx.x + cuda.blockIdx.y == 0:
            for i in range(size):
                for j in range(size):
                    out[i, j] = a[i, j] + 10
        """), id="blocks2d-one_thread_loops"),
    # -- shared memory skipped, or used without a barrier --------------------------------------------
    case("shared", "no_shared_memory", "technique_missing", """
        from numba import cuda

        TPB = 4


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.grid(1)
            if i < size:
                out[i] = a[i] + 10
        """),
    case("shared", "reads_its_cell_back_without_a_barrier", "technique_missing", """
        import numba
        from numba import cuda

        TPB = 4


        @cuda.jit
        def kernel(out, a, size):
            shared = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                shared[local_i] = a[i]
                out[i] = shared[local_i] + 10
            cuda.syncthreads()
        """),
    case("pooling", "warp_shuffles_instead_of_shared_memory", "technique_missing", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.grid(1)
            x = numba.float32(0)
            if i < size:
                x = a[i]
            one_back = cuda.shfl_up_sync(0xff, x, 1)
            two_back = cuda.shfl_up_sync(0xff, x, 2)
            if i < size:
                total = x
                if i >= 1:
                    total += one_back
                if i >= 2:
                    total += two_back
                out[i] = total
        """),
    case("dot", "one_atomic_per_thread", "technique_missing", """
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, b, size):
            i = cuda.grid(1)
            if i < size:
                cuda.atomic.add(out, 0, a[i] * b[i])
        """),
    case("dot", "shared_memory_for_show_then_atomics", "technique_missing", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, b, size):
            cache = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            t = cuda.threadIdx.x
            product = numba.float32(0)
            if i < size:
                product = a[i] * b[i]
            cache[t] = product
            cuda.syncthreads()
            seen = cache[(t + 1) % TPB]
            cuda.atomic.add(out, 0, product)
        """),
    case("prefix_sum", "one_atomic_per_thread", "technique_missing", """
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.grid(1)
            if i < size:
                cuda.atomic.add(out, cuda.blockIdx.x, a[i])
        """),
    case("axis_sum", "one_atomic_per_thread", "technique_missing", """
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            row = cuda.blockIdx.y
            col = cuda.threadIdx.x
            if col < size:
                cuda.atomic.add(out, (row, 0), a[row, col])
        """),
    case("axis_sum", "thread_0_reads_back_only_its_own_cell", "technique_missing", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            row = cuda.blockIdx.y
            col = cuda.threadIdx.x
            value = numba.float32(0)
            if col < size:
                value = a[row, col]
            cache[col] = value
            cuda.syncthreads()
            total = cache[col]
            total = cuda.shfl_down_sync(0xff, total, 4) + total
            total = cuda.shfl_down_sync(0xff, total, 2) + total
            total = cuda.shfl_down_sync(0xff, total, 1) + total
            if col == 0:
                out[row, 0] = total
        """),
    case("scan_hillis_steele", "warp_shuffle_scan", "technique_missing", """
        import numba
        from numba import cuda

        TPB = 16


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.threadIdx.x
            x = numba.float32(0)
            if i < size:
                x = a[i]
            offset = 1
            while offset < TPB:
                left = cuda.shfl_up_sync(0xffff, x, offset)
                if i >= offset:
                    x += left
                offset *= 2
            if i < size:
                out[i] = x
        """),
    case("transpose", "naive_transpose", "technique_missing", """
        from numba import cuda

        TILE = 4
        TILE_PAD = 5


        @cuda.jit
        def kernel(out, a, rows, cols):
            col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
            row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
            if row < rows and col < cols:
                out[col, row] = a[row, col]
        """),
    case("transpose", "naive_transpose_with_a_shared_detour", "technique_missing", """
        import numba
        from numba import cuda

        TILE = 4
        TILE_PAD = 5


        @cuda.jit
        def kernel(out, a, rows, cols):
            tile = cuda.shared.array((TILE, TILE_PAD), numba.float32)
            tx = cuda.threadIdx.x
            ty = cuda.threadIdx.y
            col = cuda.blockIdx.x * TILE + tx
            row = cuda.blockIdx.y * TILE + ty
            if row < rows and col < cols:
                tile[ty, tx] = a[row, col]
            cuda.syncthreads()
            if row < rows and col < cols:
                out[col, row] = tile[ty, tx]
        """),
    case("warp_reduce", "one_atomic_per_thread", "technique_missing", """
        from numba import cuda

        WARP = 32
        FULL_MASK = 0xffffffff


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.grid(1)
            if i < size:
                cuda.atomic.add(out, cuda.blockIdx.x, a[i])
        """),
    case("histogram", "global_atomics_without_a_private_histogram", "technique_missing", """
        from numba import cuda

        BINS = 8
        TPB = 16


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.grid(1)
            if i < size:
                cuda.atomic.add(out, a[i], 1)
        """),
]


@pytest.mark.parametrize("pid,kind,source", CHEATS)
def test_a_right_answer_without_the_lessons_technique_fails(catalog, pid, kind, source):
    puzzle = catalog.get(pid)
    for seed in SEEDS:
        verdict = check_sim(puzzle, source, "kernel.py", seed=seed, compile=False).verdict
        assert not verdict.passed, (pid, seed)
        assert kind in verdict.kinds(), [f.message for f in verdict.failures]
        assert "wrong_output" not in verdict.kinds(), [f.message for f in verdict.failures]  # the answer is right


def test_the_cheats_write_the_right_answer_when_judged_by_outputs_alone(catalog):
    """What makes them cheats: with [budget] and [require] taken away they pass."""
    import dataclasses

    for param in CHEATS:
        pid, _, source = param.values
        bare = dataclasses.replace(catalog.get(pid), budget={}, require={})
        verdict = check_sim(bare, source, "kernel.py", seed=1, compile=False).verdict
        assert verdict.passed, (param.id, [f.message for f in verdict.failures])


def test_the_trace_cannot_see_a_shared_value_read_and_then_ignored(catalog):
    """The limit FORMAT.md states: values are not followed, so a thread that reads its cell back
    after the barrier and writes what it kept in a register passes `shared`."""
    source = kernel("""
        import numba
        from numba import cuda

        TPB = 4


        @cuda.jit
        def kernel(out, a, size):
            shared = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            value = numba.float32(0)
            if i < size:
                value = a[i]
            shared[local_i] = value
            cuda.syncthreads()
            ignored = shared[local_i]
            if i < size:
                out[i] = value + 10
        """)
    assert check_sim(catalog.get("shared"), source, "kernel.py", seed=1, compile=False).verdict.passed


def test_scan_blelloch_still_accepts_a_hillis_steele_scan_in_shared_memory(catalog):
    """Left open on purpose (see the review in the report): at 16 elements the two scans differ by
    a fifth in shared accesses, too little to tell a correct Blelloch variant from a Hillis-Steele."""
    source = kernel("""
        import numba
        from numba import cuda

        TPB = 8
        ELEMS = 16


        @cuda.jit
        def kernel(out, a, size):
            buf = cuda.shared.array(ELEMS, numba.float32)
            t = cuda.threadIdx.x
            lo = t
            hi = t + TPB
            buf[lo] = a[lo - 1] if 0 < lo and lo - 1 < size else 0
            buf[hi] = a[hi - 1] if hi - 1 < size else 0
            cuda.syncthreads()
            offset = 1
            while offset < ELEMS:
                left_lo = buf[lo - offset] if lo >= offset else 0
                left_hi = buf[hi - offset] if hi >= offset else 0
                cuda.syncthreads()
                buf[lo] += left_lo
                buf[hi] += left_hi
                cuda.syncthreads()
                offset *= 2
            if lo < size:
                out[lo] = buf[lo]
            if hi < size:
                out[hi] = buf[hi]
        """)
    assert check_sim(catalog.get("scan_blelloch"), source, "kernel.py", seed=1, compile=False).verdict.passed
