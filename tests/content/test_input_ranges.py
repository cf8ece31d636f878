"""The puzzles whose lessons teach a numerically careful formula get inputs where the careless one
breaks: softmax_row and attention_causal scores 750 to 1000 from zero (exp() without the max shift
overflows, or gives 0 / 0, even in double precision, so the simulator fails it as a GPU does), and
layernorm rows far from zero (the one-pass variance cancels in float32). Each reference still passes.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tutor.engine.judge import check_sim
from tutor.puzzles import load_catalog

CONTENT = Path(__file__).resolve().parents[2] / "content"
PUZZLES = ["softmax_row", "layernorm", "attention_causal"]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def spec(pid: str):
    found = importlib.util.spec_from_file_location(f"{pid}_spec_ranges", CONTENT / pid / "spec.py")
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module


def changed(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new)


@pytest.mark.parametrize("pid", PUZZLES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_reference_passes_on_the_wide_inputs(catalog, pid, seed):
    puzzle = catalog.get(pid)
    verdict = check_sim(puzzle, puzzle.reference, f"{pid}/reference.py", seed=seed).verdict
    assert verdict.passed, [f.message for f in verdict.failures]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_row_softmax_without_the_max_shift_fails_on_the_simulator(catalog, seed):
    puzzle = catalog.get("softmax_row")
    source = changed(puzzle.reference, "e = math.exp(x - row_max)", "e = math.exp(x)")
    verdict = check_sim(puzzle, source, "kernel.py", seed=seed).verdict
    assert not verdict.passed


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_causal_attention_without_the_running_max_fails_on_the_simulator(catalog, seed):
    """Judged correct when the scores were a few units: exp() of them never overflowed."""
    puzzle = catalog.get("attention_causal")
    source = changed(puzzle.reference, "        new_max = max(running_max, score)\n", "        new_max = 0.0\n")
    source = changed(source, "        correction = math.exp(running_max - new_max)\n", "        correction = 1.0\n")
    verdict = check_sim(puzzle, source, "kernel.py", seed=seed).verdict
    assert not verdict.passed


def test_attention_scores_of_every_other_row_are_past_exps_range_and_exact_in_float32():
    shapes = {name: (12, 8) for name in ("out", "q", "k", "v")}
    arrays = spec("attention_causal").make_inputs(np.random.default_rng(4), shapes, {"size": 12})
    q, k = arrays["q"], arrays["k"]
    raw = np.zeros((12, 12), np.float32)
    for d in range(8):  # summed in float32, one dimension at a time
        raw += q[:, d:d + 1] * k[None, :, d]
    assert np.array_equal(raw.astype(np.float64), q.astype(np.float64) @ k.T.astype(np.float64))
    scores = raw.astype(np.float64) / np.sqrt(8)
    assert (np.abs(scores[0::2]).min(axis=1) > 710).all()
    assert (scores[0::2].max(axis=1) - scores[0::2].min(axis=1) < 40).all()


def test_layernorms_far_rows_defeat_the_one_pass_variance_in_float32():
    """As the puzzle's block computes it on a GPU, the 16 cells of a row summed by a float32 halving
    tree: on the odd rows the one-pass variance moves outputs past the tolerance, the two-pass one
    stays well inside it."""
    def tree_sum(v):
        cells = np.zeros((v.shape[0], 16), np.float32)
        cells[:, :v.shape[1]] = v
        while cells.shape[1] > 1:
            cells = cells[:, :cells.shape[1] // 2] + cells[:, cells.shape[1] // 2:]
        return cells[:, 0]

    def layernorm(a, gamma, beta, one_pass):
        n = np.float32(a.shape[1])
        mean = tree_sum(a) / n
        var = tree_sum(a * a) / n - mean * mean if one_pass else tree_sum((a - mean[:, None]) ** 2) / n
        return (a - mean[:, None]) / np.sqrt(var[:, None] + np.float32(1e-5)) * gamma + beta

    shapes = {"out": (40, 16), "a": (40, 16), "gamma": (16,), "beta": (16,)}
    layer = spec("layernorm")
    arrays = layer.make_inputs(np.random.default_rng(5), shapes, {"cols": 16})
    a, gamma, beta = arrays["a"], arrays["gamma"], arrays["beta"]
    expected = layer.spec(a, gamma, beta, 16).astype(np.float64)
    assert np.all(np.abs(a[1::2].mean(axis=1)) > 99)
    with np.errstate(invalid="ignore"):
        one, two = (layernorm(a, gamma, beta, p) for p in (True, False))
    ok_one = np.isclose(one, expected, rtol=1e-4, atol=1e-4)
    ok_two = np.isclose(two, expected, rtol=1e-4, atol=1e-4)
    assert (~ok_one[1::2]).any(axis=1).mean() > 0.8 and ok_two.all()
