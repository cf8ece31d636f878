"""The verifier on a real GPU (pytest -m gpu on the GPU machine): timing against the baseline."""

import pytest

from test_verify import HONEST, INPUTS, REFERENCE, TASK_TOML  # noqa: F401 (the same small task)
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
    assert timing["ms"] > 0 and timing["baseline_ms"] > 0 and timing["runs"] >= 20
    assert 0.5 < timing["speedup"] < 2.0  # the same kernel as the baseline
    assert not result.flags


def test_a_launch_that_does_nothing_is_rejected_on_the_gpu(gpu_task):
    source = HONEST.replace("    scale[(n + TPB - 1) // TPB, TPB](out, x, n)", "    pass")
    result = verify(gpu_task, source, "gpu")
    assert not result.passed and {f.kind for f in result.failures} == {"not_finite"}
