"""On a real GPU (run on the GPU machine: pytest -m gpu)."""

import numpy as np
import pytest

from tutor.session import Session
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
    # in the room's GPU turn only the largest config is timed (engine/gpu.largest), and it says so
    timed = [c for c in result.verdict.configs if c.kernel_ms is not None]
    assert len(timed) == 1 and timed[0].kernel_ms > 0
    assert any(n.startswith(f"timed only the largest config ({timed[0].name})") for n in result.verdict.notes)
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


def test_the_compile_happens_before_the_gpu_turn_and_the_turn_is_short(gpu, catalog):
    """Fresh code compiles in about a second; the turn holds only the launches."""
    source = catalog.get("dot").reference + "\n\nFRESH = 271828\n"
    result = gpu.check("dot", source, "fresh.py", seed=5)
    assert result.verdict.passed, result.verdict.failures
    turn = gpu.last_turn
    assert turn["turn"] and turn["prepare_s"] > turn["held_s"], turn
    print("turn:", turn)


LOCAL_HOG = """import numba
from numba import cuda


@cuda.jit
def kernel(out, a, b, m, k, n):
    scratch = cuda.local.array(32768, numba.float64)
    i, j = cuda.grid(2)
    scratch[i % 7] = 1.0
    if i < m and j < n:
        acc = numba.float32(0)
        for p in range(k):
            acc += a[i, p] * b[p, j]
        out[i, j] = acc + numba.float32(scratch[0] - 1.0)
"""


def test_a_kernel_whose_local_arrays_would_claim_the_room_is_refused_before_its_turn(monkeypatch, catalog):
    monkeypatch.setenv("GPU_TUTOR_GPU_MEMORY_MB", "64")  # read by the entry point, as `gpu-tutor` reads it
    with Runner("gpu", timeout=60, with_simulator=False, session=Session.from_environment()) as alone:
        verdict = alone.check("matmul_tiled", LOCAL_HOG, "hog.py", seed=1).verdict
        assert not verdict.passed and alone.last_turn["turn"] is False
    said = " ".join(f.message for f in verdict.failures)
    assert "local arrays take 262,144 bytes per thread" in said and "64 MB" in said, said
