"""The verifier on a real GPU (pytest -m gpu on the GPU machine): timing against the baseline."""

import textwrap

import pytest

from test_verify import HEAD, HONEST, INPUTS, REFERENCE, TASK_TOML  # noqa: F401 (the same small task)
from tutor.coach.verify import verify

pytestmark = pytest.mark.gpu


@pytest.fixture
def gpu_task(tmp_path, monkeypatch):
    folder = tmp_path / "scale"
    folder.mkdir()
    (folder / "task.toml").write_text(TASK_TOML)
    (folder / "reference.py").write_text(REFERENCE)
    (folder / "inputs.py").write_text(INPUTS)
    (folder / "naive.py").write_text(HONEST)
    monkeypatch.setenv("GPU_TUTOR_KERNELS", str(tmp_path))
    return "scale"


def test_honest_candidate_is_correct_and_timed_against_the_baseline(gpu_task):
    result = verify(gpu_task, HONEST, "gpu")
    assert result.passed, [f.to_json() for f in result.failures]
    timing = result.timing
    assert timing.ms > 0 and timing.baseline_ms > 0 and timing.runs >= 20
    assert 0.5 < timing.speedup < 2.0  # the same kernel as the baseline
    assert not result.flags


def test_a_launch_that_does_nothing_is_rejected_on_the_gpu(gpu_task):
    source = HONEST.replace("    scale[(n + TPB - 1) // TPB, TPB](out, x, n)", "    pass")
    result = verify(gpu_task, source, "gpu")
    assert not result.passed and "not_finite" in result.kinds()
    # the simulator beside it says why: nothing was launched
    assert any(f.kind == "runtime_error" and f.config.startswith("simulator") for f in result.failures)


RACING = HONEST.replace("        out[i] = 2.0 * x[i]",
                        "        out[i] = 2.0 * x[i]\n        if i + 1 < n:\n"
                        "            out[i + 1] = 2.0 * x[i + 1]  # the neighbour's cell: same value, a race")
assert RACING != HONEST


def test_a_race_whose_outputs_look_right_on_the_gpu_fails_by_the_simulator_beside_it(gpu_task):
    result = verify(gpu_task, RACING, "gpu")
    assert not result.passed and "race" in result.kinds(), [f.to_json() for f in result.failures]
    assert any(c.name.startswith("simulator, ") for c in result.configs)
    assert all(f.config.startswith("simulator") for f in result.failures if f.kind == "race")


HEAVY = HEAD + textwrap.dedent("""
    @cuda.jit
    def scale(out, x, n):
        i = cuda.grid(1)
        if i < n:
            SKIP
            acc = 0.0
            for k in range(2048):
                acc += x[i] * 0.0009765625
            out[i] = acc


    def launch(out, x):
        n = x.shape[0]
        scale[(n + TPB - 1) // TPB, TPB](out, x, n)
    """)


def test_a_kernel_that_skips_work_once_out_holds_numbers_fails_before_it_is_timed(gpu_task, tmp_path):
    # Before "One judge, rebuilt" every run started from NaN, so this passed and only its timing had
    # to be made honest; a task's out may hold anything, and a second start of zeros or random
    # numbers now shows it doing nothing, on the GPU as on the simulator beside it.
    (tmp_path / "scale" / "naive.py").write_text(HEAVY.replace("SKIP", "pass"))
    skipping = HEAVY.replace("SKIP", "if out[i] == out[i]:\n                return  # not NaN: done before")
    result = verify(gpu_task, skipping, "gpu")
    assert not result.passed and result.timing is None
    assert any(f.kind == "wrong_output" and "starting as" in f.message for f in result.failures), result.failures


def test_the_naive_kernel_is_timed_doing_the_same_work_as_itself(gpu_task, tmp_path):
    (tmp_path / "scale" / "naive.py").write_text(HEAVY.replace("SKIP", "pass"))
    result = verify(gpu_task, HEAVY.replace("SKIP", "pass"), "gpu")
    assert result.passed, [f.to_json() for f in result.failures]
    assert 0.5 < result.timing.speedup < 2.0, result.timing  # the same work as the baseline


def test_a_launch_out_of_registers_is_refused_by_the_gpu_as_by_the_simulator():
    """tests/engine/test_resources.py's case, on the card that refused it first (an H100)."""
    from pathlib import Path

    source = (Path(__file__).parent / "past_gpu" / "layernorm_params_early.py").read_text()
    result = verify("layernorm", source, "gpu")
    assert not result.passed and set(result.kinds()) == {"runtime_error"}
    assert any("OUT_OF_RESOURCES" in f.message and not f.config.startswith("simulator") for f in result.failures)


def test_a_launch_refused_only_at_the_gpus_shapes_is_refused_by_the_gpu_as_by_the_simulators_plan():
    """tests/coach/gpu_shapes/attention_keys_in_shared.py: 131 KB of dynamic shared memory at
    (1, 2, 257, 128), which the simulator's verification refuses by planning launch() there."""
    from pathlib import Path

    source = (Path(__file__).parent / "gpu_shapes" / "attention_keys_in_shared.py").read_text()
    result = verify("attention", source, "gpu")
    assert not result.passed
    assert any(f.kind == "runtime_error" and not (f.config or "").startswith("simulator") for f in result.failures)
