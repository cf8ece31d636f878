"""Every reference solution writes the same outputs on our simulator and on Numba's."""

import numpy as np
import pytest

from tutor.engine.runner import Runner
from tutor.puzzles import load_catalog

# Numba's own simulator has no warp shuffles; test_numba_sim_lacks_shuffles proves that is why.
PUZZLES = [p.id for p in load_catalog().ordered()]
NEEDS_SHUFFLES = {p.id for p in load_catalog().ordered() if "shfl_" in p.reference or "cuda.laneid" in p.reference}


@pytest.fixture(scope="module")
def runners():
    with Runner("sim") as ours, Runner("numba-sim", timeout=60, with_simulator=False) as numbas:
        yield ours, numbas


@pytest.mark.parametrize("pid", [p for p in PUZZLES if p not in NEEDS_SHUFFLES])
def test_reference_outputs_match_numbas_simulator(runners, catalog, pid):
    ours, numbas = runners
    source = catalog.get(pid).reference
    a = ours.check(pid, source, "ref.py", seed=7, n_random=2, compile=False)
    b = numbas.check(pid, source, "ref.py", seed=7, n_random=2)
    assert a.verdict.passed and b.verdict.passed, (a.verdict.failures, b.verdict.failures)
    assert len(a.runs) == len(b.runs)
    for ra, rb in zip(a.runs, b.runs):
        for name, value in ra.inputs.items():
            assert np.array_equal(value, rb.inputs[name])
        # Numba's simulator computes in float32 where ours keeps Python floats: with inputs far from
        # zero (attention's scores reach +-1000) they agree to the puzzle's tolerance, not to 1e-5.
        tol = max(1e-5, catalog.get(pid).tolerance)
        np.testing.assert_allclose(ra.got, rb.got, rtol=tol, atol=tol)


@pytest.mark.parametrize("pid", sorted(NEEDS_SHUFFLES))
def test_numba_sim_lacks_shuffles(runners, catalog, pid):
    _, numbas = runners
    verdict = numbas.check(pid, catalog.get(pid).reference, "ref.py", seed=1).verdict
    assert not verdict.passed
    assert any("shfl" in f.message or "laneid" in f.message for f in verdict.failures), verdict.failures
