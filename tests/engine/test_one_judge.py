"""The findings of "One judge, rebuilt", each a case that fooled the judge before (on 869a96f, the
commit before this work) in one direction or the other: honest kernels failed, wrong ones passed.

A correct kernel passes under every seed and every drawn config; a rule that cannot apply to a
config is not judged there, and the verdict says so. A coaching task's `out` may hold anything, so
a kernel whose answer depends on what it held fails. Every backend plays the same game."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tutor.engine.judge import check_sim
from tutor.puzzles import load_catalog


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


# The classic solution a learner writes from the lesson (and 4 of 250 public learners' files):
# products into shared memory, a barrier, thread 0 adds the valid cells. On 869a96f it failed 15 of
# seeds 0-39 (technique_missing "after the barrier it read only shared cells it had written
# itself"), whenever a random config drew size 1.
DOT_TEXTBOOK = (Path(__file__).parents[1] / "honest" / "dot" / "textbook.py").read_text()


def test_the_textbook_dot_product_passes_every_seed_and_says_where_a_rule_was_not_judged(catalog):
    puzzle = catalog.get("dot")
    noted = 0
    for seed in range(40):
        verdict = check_sim(puzzle, DOT_TEXTBOOK, seed=seed, compile=False, keep_traces=False).verdict
        assert verdict.passed, (seed, [(f.kind, f.config, f.message) for f in verdict.failures])
        noted += any("was not judged" in n and "nothing to share" in n for n in verdict.notes)
    assert noted  # the size-1 configs, said in the verdict


def test_a_kernel_that_lets_thread_0_do_a_whole_blocks_work_is_still_judged(catalog):
    # from the cheating side: no shared cell read from another thread, on configs with many elements
    lazy = DOT_TEXTBOOK.replace("total += cache[k]", "total += a[k] * b[k]")
    assert lazy != DOT_TEXTBOOK
    verdict = check_sim(catalog.get("dot"), lazy, seed=1, compile=False).verdict
    assert "technique_missing" in verdict.kinds() or "budget_exceeded" in verdict.kinds()


# perf_transpose_shared refused an honest padded tile: "allocates 1056 elements of shared memory;
# the budget is 1024. Size the shared array by the threads per block".
PADDED_TRANSPOSE = textwrap.dedent("""\
    import numba
    from numba import cuda

    TILE = 32
    BLOCK_ROWS = 8


    @cuda.jit
    def kernel(out, a, rows, cols):
        tile = cuda.shared.array((TILE, TILE + 1), numba.float32)
        x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
        y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
        for j in range(0, TILE, BLOCK_ROWS):
            if y + j < rows and x < cols:
                tile[cuda.threadIdx.y + j, cuda.threadIdx.x] = a[y + j, x]
        cuda.syncthreads()
        x = cuda.blockIdx.y * TILE + cuda.threadIdx.x
        y = cuda.blockIdx.x * TILE + cuda.threadIdx.y
        for j in range(0, TILE, BLOCK_ROWS):
            if y + j < cols and x < rows:
                out[y + j, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + j]
    """)


def test_a_padded_tile_passes_the_shared_transpose_and_the_lesson_states_the_budget(catalog):
    puzzle = catalog.get("perf_transpose_shared")
    assert puzzle.signature == ["out", "a", "rows", "cols"]
    verdict = check_sim(puzzle, PADDED_TRANSPOSE, seed=3, compile=False, keep_traces=False).verdict
    assert verdict.passed, [(f.kind, f.message) for f in verdict.failures]
    assert "## Budgets the checker enforces" in puzzle.lesson and "shared memory per block" in puzzle.lesson
