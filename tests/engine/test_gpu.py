"""On a real GPU (run on the GPU machine: pytest -m gpu)."""

import numpy as np
import pytest

from tutor.engine.runner import Runner
from tutor.puzzles import load_catalog

pytestmark = pytest.mark.gpu
PUZZLES = [p.id for p in load_catalog().ordered()]


@pytest.fixture(scope="module")
def gpu():
    with Runner("gpu", timeout=60) as r:
        yield r


@pytest.mark.parametrize("pid", PUZZLES)
def test_reference_passes_on_the_gpu_with_timings_and_matches_the_simulator(gpu, catalog, pid):
    source = catalog.get(pid).reference
    result = gpu.check(pid, source, "ref.py", seed=11)
    assert result.verdict.passed, result.verdict.failures
    assert all(c.kernel_ms is not None and c.kernel_ms > 0 for c in result.verdict.configs)
    assert result.verdict.device_passed is True and result.verdict.device
    assert result.runs and all(r.trace is not None for r in result.runs)  # the grid: the simulator's run
    with Runner("gpu", timeout=60, with_simulator=False) as alone:
        device = alone.check(pid, source, "ref.py", seed=11)
    for a, b in zip(result.runs, device.runs):
        np.testing.assert_allclose(a.got, b.got, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("pid", PUZZLES)
def test_starter_fails_on_the_gpu(gpu, catalog, pid):
    assert not gpu.check(pid, catalog.get(pid).starter, "starter.py", seed=11).verdict.passed


def test_a_list_in_a_kernel_is_a_compile_error_on_the_gpu(gpu):
    source = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n"
              "    xs = [1, 2, 3]\n    out[i] = a[i] + 10 + xs[0] - 1\n")
    verdict = gpu.check("map", source, "k.py", seed=1).verdict
    assert [f.kind for f in verdict.failures] == ["compile_error"]
    assert verdict.failures[0].line == 7


FLAG_AFTER_FIRST_RUN = """from numba import cuda


@cuda.jit
def kernel(out, a):
    local_i = cuda.threadIdx.x
    if a[0] == 12345.0:  # set by the first launch: later (timed) launches do nothing
        return
    out[local_i] = a[local_i] + 10
    cuda.syncthreads()
    if local_i == 0:
        a[0] = 12345.0
"""


def test_a_kernel_that_does_less_in_the_timed_runs_is_caught(gpu):
    verdict = gpu.check("map", FLAG_AFTER_FIRST_RUN, "k.py", seed=5).verdict
    assert not verdict.passed and "nondeterministic" in verdict.kinds(), verdict.to_json()
