"""A coaching task's verdict, from the findings of "One judge, rebuilt": `out` may hold anything,
a correct naive kernel is verified in bounded time, a verdict that stops says where and how, and
Numba's simulator plays the same game as ours."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tutor.coach.tasks import load_task
from tutor.coach.verify import verify

HERE = Path(__file__).parent


def test_a_kernel_that_does_nothing_when_out_holds_numbers_fails():
    # On 869a96f this was CORRECT: every run started from NaN, where `x == x` is false.
    naive = load_task("softmax").source("naive")
    cheat = naive.replace("    if r < rows:\n", "    if r < rows:\n        if out[r, 0] == out[r, 0]:\n            return\n")
    assert cheat != naive
    verdict = verify("softmax", cheat)
    assert not verdict.passed
    assert any(f.kind == "wrong_output" and "starting as" in f.message for f in verdict.failures), verdict.failures


def test_an_honest_kernel_passes_from_every_start_of_out():
    verdict = verify("softmax", load_task("softmax").source("naive"))
    assert verdict.passed, verdict.failures


# one thread per output element: O(S^2 D^2) work, far more than the naive kernel's (bench/verify.py times it too)
NAIVE_ELEMENT_ATTENTION = (HERE / "slow_candidates" / "attention_causal" / "one_thread_per_element.py").read_text()


@pytest.mark.e2e
def test_a_correct_naive_attention_with_one_thread_per_element_is_verified_not_timed_out():
    # On 869a96f: `timeout` after 120 s at the simulator's drawn shape.
    verdict = verify("attention_causal", NAIVE_ELEMENT_ATTENTION)
    assert verdict.passed, verdict.failures
    assert any("blocks were simulated" in n for n in verdict.notes)
    assert any("no modelled time" in n for n in verdict.notes)  # far more work than the naive kernel: unscored


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_a_wrong_naive_attention_is_caught_in_the_sampled_blocks():
    wrong = NAIVE_ELEMENT_ATTENTION.replace("out[b, h, qi, c] = acc / total", "out[b, h, qi, c] = acc / total * 1.01")
    verdict = verify("attention_causal", wrong, timeout=60)
    assert "wrong_output" in verdict.kinds()


def test_a_timeout_names_the_shape_and_the_time_it_took():
    verdict = verify("attention_causal", NAIVE_ELEMENT_ATTENTION, timeout=8)
    assert verdict.kinds() == ["timeout"], verdict.failures
    f = verdict.failures[0]
    assert f.config.startswith("shape (") or f.config == "loading"
    assert "ran out while the candidate ran at" in f.message and " s)" in f.message


def test_numba_s_simulator_judges_shared_memory_without_a_barrier_as_ours_does():
    # On 869a96f, `--backend numba-sim` applied no barrier rule: this passed there and failed on sim.
    from tutor.engine.runner import Runner

    source = textwrap.dedent("""\
        import numba
        from numba import cuda

        TPB = 8


        @cuda.jit
        def kernel(out, a, size):
            shared = cuda.shared.array(TPB, numba.float32)
            i = cuda.grid(1)
            if i < size:
                shared[cuda.threadIdx.x] = a[i]
                out[i] = shared[cuda.threadIdx.x] + 10
        """)
    with Runner("numba-sim", timeout=60) as numba_sim, Runner("sim", timeout=60) as ours:
        theirs, mine = (r.check("shared", source, seed=5).verdict for r in (numba_sim, ours))
    assert not mine.passed and not theirs.passed
    assert set(mine.kinds()) <= set(theirs.kinds()), (mine.kinds(), theirs.kinds())
