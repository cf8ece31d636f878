"""A GPU judges outputs only; every check on it is also judged by our simulator's traced run of the
same inputs, and passes only when both pass. A machine without a GPU tests the same merging with
Numba's simulator in the GPU's place: it too runs the file with the real Numba and sees outputs only.
The one-defect solutions here are the ones such an outputs-only judge passes today."""

import sys
from pathlib import Path

import pytest

from tutor.engine.judge import add_compile_result, merge_device, one_root_cause
from tutor.engine.runner import Runner
from tutor.engine.verdict import Failure, Verdict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "content"))
from test_wrong_solutions import WRONG  # noqa: E402

BLIND = ["shared-barrier_inside_the_guard", "shared-reads_a_again_instead_of_shared",
         "dot-every_thread_adds_into_out0", "dot-accumulates_in_out", "prefix_sum-barrier_inside_the_if",
         "conv1d-window_from_global_memory", "zip-python_list"]
CASES = {p.id: p.values for p in WRONG}


@pytest.fixture(scope="module")
def outputs_only():
    with Runner("numba-sim", timeout=60, with_simulator=False) as r:  # Numba's simulator alone: outputs only
        yield r


@pytest.fixture(scope="module")
def judged_twice():
    with Runner("numba-sim", timeout=60) as r:  # ours beside it, as every backend is judged
        yield r


@pytest.mark.parametrize("case", BLIND)
def test_a_defect_an_outputs_only_judge_passes_fails_with_its_own_kind(outputs_only, judged_twice, case):
    pid, kind, source, seed = CASES[case]
    assert outputs_only.check(pid, source, seed=seed).verdict.passed  # what a GPU alone says
    verdict = judged_twice.check(pid, source, seed=seed).verdict
    assert not verdict.passed and kind in verdict.kinds(), verdict.to_json()


def test_a_reference_passes_with_the_simulators_traces_for_the_grid(judged_twice, catalog):
    result = judged_twice.check("dot", catalog.get("dot").reference, seed=3)
    verdict = result.verdict
    assert verdict.passed and verdict.device_passed is True and verdict.backend == "numba-sim"
    assert result.runs and all(r.trace is not None and r.expected is not None for r in result.runs)
    assert any("simulator ran the same inputs" in n for n in verdict.notes)
    # the device's configs carry the memory counters of the simulator's run of the same inputs
    assert all(c.counters and c.counters["metrics"]["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
               for c in verdict.configs)


def test_a_race_the_device_got_right_still_fails_and_says_the_device_was_right(judged_twice):
    pid, kind, source, seed = CASES["dot-every_thread_adds_into_out0"]
    verdict = judged_twice.check(pid, source, seed=seed).verdict
    assert verdict.device_passed is True and not verdict.passed and "race" in verdict.kinds()


def test_a_wrong_output_reads_once_with_the_simulators_thread_and_line(judged_twice):
    pid, kind, source, seed = CASES["map-adds_one_not_ten"]
    verdict = judged_twice.check(pid, source, seed=seed).verdict
    (wrong,) = [f for f in verdict.failures if f.kind == "wrong_output"]
    assert wrong.thread is not None and wrong.line is not None and verdict.device_passed is False


def test_an_index_error_on_the_device_is_the_out_of_bounds_access_the_simulator_names(judged_twice):
    pid, kind, source, seed = CASES["guard-no_guard"]
    verdict = judged_twice.check(pid, source, seed=seed).verdict
    assert "runtime_error" not in verdict.kinds() and "out_of_bounds" in verdict.kinds()


# -- one root cause, one failure ------------------------------------------------------------------
MISSPELT = """from numba import cuda


@cuda.jit
def kernel(out, a):
    local_i = cuda.threadIdx.x
    out[local_i] = a[local_i] + tem
"""


def test_a_misspelt_name_is_one_compile_error_not_also_a_runtime_error():
    from tutor.engine.judge import check_sim
    from tutor.engine.loading.compile import nvvm_missing
    from tutor.puzzles import load_catalog

    if nvvm_missing():
        pytest.skip(nvvm_missing())
    verdict = check_sim(load_catalog().get("map"), MISSPELT, seed=1).verdict
    assert verdict.kinds() == ["compile_error"] and verdict.failures[0].line == 7, verdict.to_json()


def test_the_apps_late_compile_result_folds_the_same_way():
    verdict = Verdict("map", "sim", failures=[Failure("runtime_error", "NameError: name 'tem'", line=7)])
    add_compile_result(verdict, Failure("compile_error", "Numba cannot compile: tem", line=7), "a note")
    assert verdict.kinds() == ["compile_error"] and verdict.notes == ["a note"]
    assert one_root_cause([Failure("runtime_error", "x", line=3), Failure("compile_error", "y", line=7)]) == \
        [Failure("runtime_error", "x", line=3), Failure("compile_error", "y", line=7)]


def test_merging_with_a_device_that_did_not_run_fails():
    from tutor.engine.verdict import CheckResult

    sim = CheckResult(Verdict("map", "sim"))
    device = CheckResult(Verdict("map", "gpu", failures=[Failure("runtime_error", "no GPU")]))
    merged = merge_device(sim, device).verdict
    assert not merged.passed and merged.device_passed is False


def test_a_file_that_never_ran_says_so_not_zero_of_zero():
    from tutor.engine.judge import check_sim
    from tutor.engine.views.textview import verdict_text
    from tutor.puzzles import load_catalog

    verdict = check_sim(load_catalog().get("map"), "def kernel(out, a)\n    pass\n", seed=1).verdict
    assert verdict.kinds() == ["compile_error"]
    assert "before any config ran" in verdict_text(verdict) and "0 of 0" not in verdict_text(verdict)


@pytest.mark.parametrize("case", ["shared-barrier_inside_the_guard", "dot-barrier_inside_the_guard",
                                  "matmul-guard_around_the_tile_loop"])
def test_cells_a_diverged_block_never_wrote_are_told_under_the_divergence(case):
    from tutor.engine.judge import check_sim
    from tutor.puzzles import load_catalog

    pid, kind, source, seed = CASES[case]
    verdict = check_sim(load_catalog().get(pid), source, seed=seed, compile=False).verdict
    assert "wrong_output" not in verdict.kinds() and "barrier_divergence" in verdict.kinds(), verdict.kinds()
    (cause,) = [f for f in verdict.failures if f.kind == "barrier_divergence"][:1]
    assert "Because the block stopped there" in cause.message
    assert any("consequence" in d for d in cause.details)


def test_a_timed_run_that_wrote_less_than_the_judged_run_fails_the_check(catalog):
    """The judge's half of the GPU's timing: what the device reported from its timed runs."""
    import numpy as np

    from tutor.engine.judge import _config_result, judge, plan
    from tutor.engine.verdict import CheckResult, ConfigRun

    puzzle = catalog.get("map")
    planned = plan(puzzle, seed=4, n_random=0)
    verdict = Verdict("map", "gpu")
    runs = []
    for p in planned:
        timed = np.stack([p.expected, p.expected, np.zeros_like(p.expected)]).astype(np.float32)
        runs.append(ConfigRun(p.config, p.inputs, None, p.expected.astype(np.float32), timed=timed))
        verdict.configs.append(_config_result(p.config, True))
    result = judge(puzzle, CheckResult(verdict, runs), planned)
    assert not result.verdict.passed and result.verdict.kinds() == ["nondeterministic"]
    assert "timed run 3 of 3" in result.verdict.failures[0].message


def test_the_text_view_pins_a_failure_to_its_line_unless_the_message_says_it():
    from tutor.engine.verdict import Failure, Verdict
    from tutor.engine.views.textview import verdict_text

    verdict = Verdict(puzzle="p", backend="sim")
    verdict.failures = [Failure(kind="runtime_error", message="the launch was refused", line=59, config="c"),
                        Failure(kind="compile_error", message="bad at line 7", line=7)]
    text = verdict_text(verdict)
    assert "[config: c] [line 59]" in text
    assert "[line 7]" not in text and "bad at line 7" in text
