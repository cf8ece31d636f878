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
    with Runner("sim") as sim:
        ours = sim.check(pid, source, "ref.py", seed=11, compile=False)
    for a, b in zip(ours.runs, result.runs):
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
