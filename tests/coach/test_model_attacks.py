"""Correct candidates written to fool the modelled time (tests/coach/model_attacks/): each hides
serial work a GPU pays for in a place the counting could lose it, and each scored faster than the
naive kernel on the model as first rebuilt (docstrings: the modelled figures then). Each must now
be modelled slower than the naive kernel of its task."""

import sys
from pathlib import Path

import pytest

from tutor.engine.loading.compile import nvvm_missing

ROOT = Path(__file__).resolve().parents[2]
ATTACKS = sorted(p for p in (ROOT / "tests" / "coach" / "model_attacks").glob("*/*.py")
                 if (ROOT / "kernels" / p.parent.name).is_dir())
sys.path.insert(0, str(ROOT / "bench"))

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(nvvm_missing() is not None, reason="the model reads the real compiler's PTX")]

_NAIVE: dict = {}


def _modelled_us(task: str, name: str, source: str) -> float:
    import modelled_time as bench

    return bench.modelled(bench.Case(task, name, source))["modelled_us"]


@pytest.mark.parametrize("path", ATTACKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_an_attack_is_modelled_slower_than_naive(path):
    task = path.parent.name
    if task not in _NAIVE:
        _NAIVE[task] = _modelled_us(task, "naive", (ROOT / "kernels" / task / "naive.py").read_text())
    mine = _modelled_us(task, path.stem, path.read_text())
    assert mine > _NAIVE[task], f"{task}/{path.stem}: modelled {mine:.3g} us, naive {_NAIVE[task]:.3g} us"


def test_there_are_attacks_on_two_tasks():
    assert len(ATTACKS) >= 8 and {p.parent.name for p in ATTACKS} >= {"reduce_sum", "softmax"}
