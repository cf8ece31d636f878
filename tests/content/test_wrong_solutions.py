"""Every classic puzzle against the mistakes a real beginner makes.

Each wrong solution is a whole kernel file, checked on our simulator exactly as a learner's file is
(fixed configs plus seeded random ones, and the real-compiler check where NVVM is installed). The
test asserts that the verdict fails and that the failure kind we mean is among the failures. Where a
line carries a `# <- BUG` marker, some failure of that kind must point at one of the marked lines.

Also: every reference passes with three seeds and every starter fails.
"""

import textwrap

import pytest

from tutor.engine.judge import check_sim
from tutor.engine.loading.compile import nvvm_missing
from tutor.puzzles import load_catalog

CLASSIC = ["map", "zip", "guard", "map2d", "broadcast", "blocks", "blocks2d", "shared", "pooling",
           "dot", "conv1d", "prefix_sum", "axis_sum", "matmul"]
SEED = 1
MARK = "# <- BUG"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def case(pid, name, kind, source, seed=SEED):
    return pytest.param(pid, kind, textwrap.dedent(source).lstrip("\n"), seed, id=f"{pid}-{name}")


WRONG = [
    # -- map ----------------------------------------------------------------------------------------
    case("map", "adds_one_not_ten", "wrong_output", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a):
            local_i = cuda.threadIdx.x
            out[local_i] = a[local_i] + 1
        """),
    case("map", "reads_right_neighbour", "out_of_bounds", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a):
            local_i = cuda.threadIdx.x
            out[local_i] = a[local_i + 1] + 10  # <- BUG
        """),
    case("map", "negative_index", "out_of_bounds", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a):
            local_i = cuda.threadIdx.x
            out[local_i] = a[local_i - 1] + 10  # <- BUG
        """),
    # -- zip ----------------------------------------------------------------------------------------
    case("zip", "reads_a_twice", "wrong_output", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, b):
            local_i = cuda.threadIdx.x
            out[local_i] = a[local_i] + a[local_i]
        """),
    case("zip", "python_list", "compile_error", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, b):
            local_i = cuda.threadIdx.x
            pair = [a[local_i], b[local_i]]
            out[local_i] = pair[0] + pair[1]
        """),
    case("zip", "pairs_mirrored_elements", "wrong_output", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, b):
            local_i = cuda.threadIdx.x
            out[local_i] = a[local_i] + b[3 - local_i]
        """),
    # -- guard --------------------------------------------------------------------------------------
    case("guard", "no_guard", "out_of_bounds", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, size):
            local_i = cuda.threadIdx.x
            out[local_i] = a[local_i] + 10  # <- BUG
        """),
    case("guard", "off_by_one_guard", "out_of_bounds", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, size):
            local_i = cuda.threadIdx.x
            if local_i <= size:
                out[local_i] = a[local_i] + 10  # <- BUG
        """),
    case("guard", "reads_before_the_guard", "out_of_bounds", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, size):
            local_i = cuda.threadIdx.x
            value = a[local_i]  # <- BUG
            if local_i < size:
                out[local_i] = value + 10
        """),
    # -- map2d --------------------------------------------------------------------------------------
    case("map2d", "guards_only_the_row", "out_of_bounds", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.threadIdx.x
            j = cuda.threadIdx.y
            if i < size:
                out[i, j] = a[i, j] + 10  # <- BUG
        """),
    case("map2d", "or_instead_of_and", "out_of_bounds", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.threadIdx.x
            j = cuda.threadIdx.y
            if i < size or j < size:
                out[i, j] = a[i, j] + 10  # <- BUG
        """),
    case("map2d", "swapped_indices_transpose", "wrong_output", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.threadIdx.x
            j = cuda.threadIdx.y
            if i < size and j < size:
                out[j, i] = a[i, j] + 10
        """),
    # -- broadcast ----------------------------------------------------------------------------------
    case("broadcast", "swapped_broadcast_axes", "out_of_bounds", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, b, size):
            i = cuda.threadIdx.x
            j = cuda.threadIdx.y
            if i < size and j < size:
                out[i, j] = a[0, j] + b[i, 0]  # <- BUG
        """),
    case("broadcast", "same_index_for_both", "wrong_output", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, b, size):
            i = cuda.threadIdx.x
            j = cuda.threadIdx.y
            if i < size and j < size:
                out[i, j] = a[i, 0] + b[0, i]
        """),
    case("broadcast", "no_guard", "out_of_bounds", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, b, size):
            i = cuda.threadIdx.x
            j = cuda.threadIdx.y
            out[i, j] = a[i, 0] + b[0, j]  # <- BUG
        """),
    # -- blocks -------------------------------------------------------------------------------------
    case("blocks", "thread_index_only", "race", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.threadIdx.x
            if i < size:
                out[i] = a[i] + 10  # <- BUG
        """),
    case("blocks", "no_guard_in_last_block", "out_of_bounds", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            out[i] = a[i] + 10  # <- BUG
        """),
    case("blocks", "adds_block_number_instead_of_multiplying", "race", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.blockIdx.x + cuda.threadIdx.x
            if i < size:
                out[i] = a[i] + 10  # <- BUG
        """),
    # -- blocks2d -----------------------------------------------------------------------------------
    case("blocks2d", "thread_index_only", "race", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, size):
            i = cuda.threadIdx.x
            j = cuda.threadIdx.y
            if i < size and j < size:
                out[i, j] = a[i, j] + 10  # <- BUG
        """),
    case("blocks2d", "guards_only_the_row", "out_of_bounds", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, size):
            i, j = cuda.grid(2)
            if i < size:
                out[i, j] = a[i, j] + 10  # <- BUG
        """),
    case("blocks2d", "reads_the_transposed_cell", "wrong_output", """
        from numba import cuda


        @cuda.jit
        def kernel(out, a, size):
            i, j = cuda.grid(2)
            if i < size and j < size:
                out[i, j] = a[j, i] + 10
        """),
    # -- shared -------------------------------------------------------------------------------------
    case("shared", "global_index_into_shared", "out_of_bounds", """
        import numba
        from numba import cuda

        TPB = 4


        @cuda.jit
        def kernel(out, a, size):
            shared = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                shared[i] = a[i]  # <- BUG
            cuda.syncthreads()
            if i < size:
                out[i] = shared[i] + 10  # <- BUG
        """),
    case("shared", "barrier_inside_the_guard", "barrier_divergence", """
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
                cuda.syncthreads()  # <- BUG
                out[i] = shared[local_i] + 10
        """),
    case("shared", "reads_a_again_instead_of_shared", "budget_exceeded", """
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
            else:
                shared[local_i] = 0
            cuda.syncthreads()
            if i < size:
                out[i] = a[i] + 10
        """),
    # -- pooling ------------------------------------------------------------------------------------
    case("pooling", "neighbours_from_global_memory", "budget_exceeded", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            shared = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            if i < size:
                total = a[i]
                if i >= 1:
                    total += a[i - 1]
                if i >= 2:
                    total += a[i - 2]
                out[i] = total
        """),
    case("pooling", "no_start_of_array_check", "out_of_bounds", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            shared = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                shared[local_i] = a[i]
            else:
                shared[local_i] = 0
            cuda.syncthreads()
            if i < size:
                out[i] = shared[local_i] + shared[local_i - 1] + shared[local_i - 2]  # <- BUG
        """),
    case("pooling", "no_barrier", "race", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            shared = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                shared[local_i] = a[i]  # <- BUG
            else:
                shared[local_i] = 0
            if i < size:
                total = shared[local_i]
                if local_i >= 1:
                    total += shared[local_i - 1]  # <- BUG
                if local_i >= 2:
                    total += shared[local_i - 2]  # <- BUG
                out[i] = total
        """),
    case("pooling", "window_one_too_short", "wrong_output", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            shared = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                shared[local_i] = a[i]
            else:
                shared[local_i] = 0
            cuda.syncthreads()
            if i < size:
                total = shared[local_i]
                if local_i >= 1:
                    total += shared[local_i - 1]
                out[i] = total
        """),
    # -- dot ----------------------------------------------------------------------------------------
    case("dot", "every_thread_adds_into_out0", "race", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, b, size):
            cache = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            if i < size:
                out[0] += a[i] * b[i]  # <- BUG
        """),
    case("dot", "no_barrier", "race", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, b, size):
            cache = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                cache[local_i] = a[i] * b[i]  # <- BUG
            else:
                cache[local_i] = 0  # <- BUG
            if local_i == 0:
                total = numba.float32(0)
                for k in range(TPB):
                    total += cache[k]  # <- BUG
                out[0] = total
        """),
    case("dot", "no_zero_fill", "uninitialized_read", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, b, size):
            cache = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                cache[local_i] = a[i] * b[i]
            cuda.syncthreads()
            if local_i == 0:
                total = numba.float32(0)
                for k in range(TPB):
                    total += cache[k]  # <- BUG
                out[0] = total
        """),
    case("dot", "accumulates_in_out", "budget_exceeded", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, b, size):
            cache = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                cache[local_i] = a[i] * b[i]
            else:
                cache[local_i] = 0
            cuda.syncthreads()
            if local_i == 0:
                out[0] = 0
                for k in range(TPB):
                    out[0] += cache[k]
        """),
    case("dot", "barrier_inside_the_guard", "barrier_divergence", """
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
                cuda.syncthreads()  # <- BUG
            if local_i == 0:
                total = numba.float32(0)
                for k in range(TPB):
                    total += cache[k]
                out[0] = total
        """),
    # -- conv1d -------------------------------------------------------------------------------------
    case("conv1d", "window_from_global_memory", "budget_exceeded", """
        import numba
        from numba import cuda

        TPB = 8
        MAX_CONV = 4
        TPB_MAX_CONV = 12


        @cuda.jit
        def kernel(out, a, b, a_size, b_size):
            a_shared = cuda.shared.array(TPB_MAX_CONV, numba.float32)
            b_shared = cuda.shared.array(MAX_CONV, numba.float32)
            i = cuda.grid(1)
            if i < a_size:
                total = numba.float32(0)
                for j in range(b_size):
                    if i + j < a_size:
                        total += a[i + j] * b[j]
                out[i] = total
        """),
    case("conv1d", "no_halo", "uninitialized_read", """
        import numba
        from numba import cuda

        TPB = 8
        MAX_CONV = 4
        TPB_MAX_CONV = 12


        @cuda.jit
        def kernel(out, a, b, a_size, b_size):
            a_shared = cuda.shared.array(TPB_MAX_CONV, numba.float32)
            b_shared = cuda.shared.array(MAX_CONV, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < a_size:
                a_shared[local_i] = a[i]
            else:
                a_shared[local_i] = 0
            if local_i < MAX_CONV:
                if local_i < b_size:
                    b_shared[local_i] = b[local_i]
                else:
                    b_shared[local_i] = 0
            cuda.syncthreads()
            if i < a_size:
                total = numba.float32(0)
                for j in range(b_size):
                    total += a_shared[local_i + j] * b_shared[j]  # <- BUG
                out[i] = total
        """),
    case("conv1d", "loads_b_past_its_end", "out_of_bounds", """
        import numba
        from numba import cuda

        TPB = 8
        MAX_CONV = 4
        TPB_MAX_CONV = 12


        @cuda.jit
        def kernel(out, a, b, a_size, b_size):
            a_shared = cuda.shared.array(TPB_MAX_CONV, numba.float32)
            b_shared = cuda.shared.array(MAX_CONV, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < a_size:
                a_shared[local_i] = a[i]
            else:
                a_shared[local_i] = 0
            if local_i >= TPB - MAX_CONV:
                halo = i + MAX_CONV
                if halo < a_size:
                    a_shared[local_i + MAX_CONV] = a[halo]
                else:
                    a_shared[local_i + MAX_CONV] = 0
            if local_i < MAX_CONV:
                b_shared[local_i] = b[local_i]  # <- BUG
            cuda.syncthreads()
            if i < a_size:
                total = numba.float32(0)
                for j in range(b_size):
                    total += a_shared[local_i + j] * b_shared[j]
                out[i] = total
        """),
    case("conv1d", "no_barrier", "race", """
        import numba
        from numba import cuda

        TPB = 8
        MAX_CONV = 4
        TPB_MAX_CONV = 12


        @cuda.jit
        def kernel(out, a, b, a_size, b_size):
            a_shared = cuda.shared.array(TPB_MAX_CONV, numba.float32)
            b_shared = cuda.shared.array(MAX_CONV, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < a_size:
                a_shared[local_i] = a[i]
            else:
                a_shared[local_i] = 0
            if local_i >= TPB - MAX_CONV:
                halo = i + MAX_CONV
                if halo < a_size:
                    a_shared[local_i + MAX_CONV] = a[halo]
                else:
                    a_shared[local_i + MAX_CONV] = 0
            if local_i < MAX_CONV:
                if local_i < b_size:
                    b_shared[local_i] = b[local_i]
                else:
                    b_shared[local_i] = 0
            if i < a_size:
                total = numba.float32(0)
                for j in range(b_size):
                    total += a_shared[local_i + j] * b_shared[j]
                out[i] = total
        """),
    # -- prefix_sum ---------------------------------------------------------------------------------
    case("prefix_sum", "barrier_inside_the_if", "barrier_divergence", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                cache[local_i] = a[i]
            else:
                cache[local_i] = 0
            cuda.syncthreads()
            stride = TPB // 2
            while stride > 0:
                if local_i < stride:
                    cache[local_i] += cache[local_i + stride]
                    cuda.syncthreads()  # <- BUG
                stride //= 2
            if local_i == 0:
                out[cuda.blockIdx.x] = cache[0]
        """),
    case("prefix_sum", "no_barrier_between_steps", "race", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                cache[local_i] = a[i]
            else:
                cache[local_i] = 0
            cuda.syncthreads()
            stride = TPB // 2
            while stride > 0:
                if local_i < stride:
                    cache[local_i] += cache[local_i + stride]  # <- BUG
                stride //= 2
            if local_i == 0:
                out[cuda.blockIdx.x] = cache[0]  # <- BUG
        """),
    case("prefix_sum", "every_block_writes_out0", "race", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                cache[local_i] = a[i]
            else:
                cache[local_i] = 0
            cuda.syncthreads()
            stride = TPB // 2
            while stride > 0:
                if local_i < stride:
                    cache[local_i] += cache[local_i + stride]
                cuda.syncthreads()
                stride //= 2
            if local_i == 0:
                out[0] = cache[0]  # <- BUG
        """),
    case("prefix_sum", "no_zero_fill", "uninitialized_read", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                cache[local_i] = a[i]
            cuda.syncthreads()
            stride = TPB // 2
            while stride > 0:
                if local_i < stride:
                    cache[local_i] += cache[local_i + stride]  # <- BUG
                cuda.syncthreads()
                stride //= 2
            if local_i == 0:
                out[cuda.blockIdx.x] = cache[0]
        """),
    case("prefix_sum", "stops_one_step_early", "wrong_output", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            local_i = cuda.threadIdx.x
            if i < size:
                cache[local_i] = a[i]
            else:
                cache[local_i] = 0
            cuda.syncthreads()
            stride = TPB // 2
            while stride > 1:
                if local_i < stride:
                    cache[local_i] += cache[local_i + stride]
                cuda.syncthreads()
                stride //= 2
            if local_i == 0:
                out[cuda.blockIdx.x] = cache[0]
        """),
    # -- axis_sum -----------------------------------------------------------------------------------
    case("axis_sum", "row_from_block_x", "race", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            row = cuda.blockIdx.x
            col = cuda.threadIdx.x
            if col < size:
                cache[col] = a[row, col]
            else:
                cache[col] = 0
            cuda.syncthreads()
            stride = TPB // 2
            while stride > 0:
                if col < stride:
                    cache[col] += cache[col + stride]
                cuda.syncthreads()
                stride //= 2
            if col == 0:
                out[row, 0] = cache[0]  # <- BUG
        """),
    case("axis_sum", "no_column_guard", "out_of_bounds", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            row = cuda.blockIdx.y
            col = cuda.threadIdx.x
            cache[col] = a[row, col]  # <- BUG
            cuda.syncthreads()
            stride = TPB // 2
            while stride > 0:
                if col < stride:
                    cache[col] += cache[col + stride]
                cuda.syncthreads()
                stride //= 2
            if col == 0:
                out[row, 0] = cache[0]
        """),
    case("axis_sum", "swapped_row_and_column", "out_of_bounds", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            row = cuda.blockIdx.y
            col = cuda.threadIdx.x
            if col < size:
                cache[col] = a[col, row]  # <- BUG
            else:
                cache[col] = 0
            cuda.syncthreads()
            stride = TPB // 2
            while stride > 0:
                if col < stride:
                    cache[col] += cache[col + stride]
                cuda.syncthreads()
                stride //= 2
            if col == 0:
                out[row, 0] = cache[0]
        """),
    case("axis_sum", "barrier_inside_the_load_guard", "barrier_divergence", """
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            cache = cuda.shared.array(TPB, numba.float32)
            row = cuda.blockIdx.y
            col = cuda.threadIdx.x
            cache[col] = 0
            if col < size:
                cache[col] = a[row, col]
                cuda.syncthreads()  # <- BUG
            stride = TPB // 2
            while stride > 0:
                if col < stride:
                    cache[col] += cache[col + stride]
                cuda.syncthreads()
                stride //= 2
            if col == 0:
                out[row, 0] = cache[0]
        """),
    # -- matmul -------------------------------------------------------------------------------------
    case("matmul", "no_second_barrier", "race", """
        import numba
        from numba import cuda

        TPB = 3


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
                if i < size and start + local_j < size:
                    a_tile[local_i, local_j] = a[i, start + local_j]  # <- BUG
                else:
                    a_tile[local_i, local_j] = 0  # <- BUG
                if start + local_i < size and j < size:
                    b_tile[local_i, local_j] = b[start + local_i, j]  # <- BUG
                else:
                    b_tile[local_i, local_j] = 0  # <- BUG
                cuda.syncthreads()
                for k in range(TPB):
                    total += a_tile[local_i, k] * b_tile[k, local_j]  # <- BUG
            if i < size and j < size:
                out[i, j] = total
        """),
    case("matmul", "straight_from_global_memory", "budget_exceeded", """
        import numba
        from numba import cuda

        TPB = 3


        @cuda.jit
        def kernel(out, a, b, size):
            a_tile = cuda.shared.array((TPB, TPB), numba.float32)
            b_tile = cuda.shared.array((TPB, TPB), numba.float32)
            i, j = cuda.grid(2)
            if i < size and j < size:
                total = numba.float32(0)
                for k in range(size):
                    total += a[i, k] * b[k, j]
                out[i, j] = total
        """),
    case("matmul", "guard_around_the_tile_loop", "barrier_divergence", """
        import numba
        from numba import cuda

        TPB = 3


        @cuda.jit
        def kernel(out, a, b, size):
            a_tile = cuda.shared.array((TPB, TPB), numba.float32)
            b_tile = cuda.shared.array((TPB, TPB), numba.float32)
            i, j = cuda.grid(2)
            local_i = cuda.threadIdx.x
            local_j = cuda.threadIdx.y
            if i < size and j < size:
                total = numba.float32(0)
                for t in range((size + TPB - 1) // TPB):
                    start = t * TPB
                    if start + local_j < size:
                        a_tile[local_i, local_j] = a[i, start + local_j]
                    else:
                        a_tile[local_i, local_j] = 0
                    if start + local_i < size:
                        b_tile[local_i, local_j] = b[start + local_i, j]
                    else:
                        b_tile[local_i, local_j] = 0
                    cuda.syncthreads()  # <- BUG
                    for k in range(TPB):
                        total += a_tile[local_i, k] * b_tile[k, local_j]
                    cuda.syncthreads()  # <- BUG
                out[i, j] = total
        """),
    case("matmul", "no_zero_fill_of_the_tiles", "uninitialized_read", """
        import numba
        from numba import cuda

        TPB = 3


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
                if i < size and start + local_j < size:
                    a_tile[local_i, local_j] = a[i, start + local_j]
                if start + local_i < size and j < size:
                    b_tile[local_i, local_j] = b[start + local_i, j]
                cuda.syncthreads()
                for k in range(TPB):
                    total += a_tile[local_i, k] * b_tile[k, local_j]  # <- BUG
                cuda.syncthreads()
            if i < size and j < size:
                out[i, j] = total
        """),
    case("matmul", "tile_loaded_with_swapped_offsets", "wrong_output", """
        import numba
        from numba import cuda

        TPB = 3


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
                if i < size and start + local_j < size:
                    a_tile[local_i, local_j] = a[i, start + local_j]
                else:
                    a_tile[local_i, local_j] = 0
                if start + local_j < size and j < size:
                    b_tile[local_i, local_j] = b[start + local_j, j]
                else:
                    b_tile[local_i, local_j] = 0
                cuda.syncthreads()
                for k in range(TPB):
                    total += a_tile[local_i, k] * b_tile[k, local_j]
                cuda.syncthreads()
            if i < size and j < size:
                out[i, j] = total
        """),
]


def marked_lines(source):
    return {n for n, line in enumerate(source.splitlines(), 1) if MARK in line}


def kinds(verdict):
    return sorted({f.kind for f in verdict.failures})


def test_every_classic_puzzle_has_at_least_two_wrong_solutions():
    per_puzzle = {pid: 0 for pid in CLASSIC}
    for param in WRONG:
        per_puzzle[param.values[0]] += 1
    assert all(n >= 2 for n in per_puzzle.values()), per_puzzle


@pytest.mark.parametrize("pid,kind,source,seed", WRONG)
def test_wrong_solution_fails_with_the_intended_kind(catalog, pid, kind, source, seed):
    if kind == "compile_error" and nvvm_missing():
        pytest.skip("needs the real Numba compiler (NVVM)")
    verdict = check_sim(catalog.get(pid), source, "kernel.py", seed=seed, compile=True).verdict
    assert not verdict.passed
    assert kind in kinds(verdict), (kinds(verdict), [f.message for f in verdict.failures])
    lines = marked_lines(source)
    if lines:
        got = {f.line for f in verdict.failures if f.kind == kind}
        assert got & lines, f"{kind} reported at lines {got}, expected one of {sorted(lines)}"


@pytest.mark.parametrize("pid", CLASSIC)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_reference_passes(catalog, pid, seed):
    puzzle = catalog.get(pid)
    verdict = check_sim(puzzle, puzzle.reference, f"{pid}/reference.py", seed=seed, compile=True).verdict
    assert verdict.passed, [f.message for f in verdict.failures]
    assert verdict.failures == []


@pytest.mark.parametrize("pid", CLASSIC)
def test_starter_fails(catalog, pid):
    puzzle = catalog.get(pid)
    verdict = check_sim(puzzle, puzzle.starter, f"{pid}/starter.py", seed=SEED, compile=True).verdict
    assert not verdict.passed
    assert verdict.failures


# -- on a real GPU (pytest -m gpu): the simulator judges beside it ---------------------------------
@pytest.fixture(scope="module")
def gpu_runner():
    from tutor.engine.runner import Runner

    with Runner("gpu", timeout=60) as runner:
        yield runner


@pytest.mark.gpu
@pytest.mark.parametrize("pid, kind, source, seed", WRONG)
def test_wrong_solution_fails_with_the_intended_kind_on_the_gpu(gpu_runner, pid, kind, source, seed):
    verdict = gpu_runner.check(pid, source, f"{pid}.py", seed=seed).verdict
    assert not verdict.passed and kind in kinds(verdict), verdict.to_json()


@pytest.mark.gpu
@pytest.mark.parametrize("pid", CLASSIC)
def test_reference_passes_on_the_gpu(gpu_runner, catalog, pid):
    verdict = gpu_runner.check(pid, catalog.get(pid).reference, f"{pid}.py", seed=SEED).verdict
    assert verdict.passed and verdict.device_passed, verdict.to_json()
