"""The calibration kernels (tests/coach/calibration/): each one is listed with its kind, says what it
stresses, passes the static screen, and passes a whole verification on our simulator: the extra work
an instruction-counting model is to be fitted on never changes the answer, on any shape the
verifier draws."""

import ast

import pytest

from calibration import CATALOGUE, HERE, KINDS, kernels
from tutor.coach.verify import verify
from tutor.engine.loading.static_rules import check_task_module

# Generous: the attention kernels take 20-60 s on two loaded cores, and what is judged here is the
# output, not the machine's speed.
TIMEOUT = 300.0
STRESS = ("compute_bound", "latency_bound", "divergent", "local_memory")


def test_every_file_is_in_the_catalogue_and_every_entry_is_a_file():
    on_disk = {(p.parent.name, p.stem) for p in HERE.glob("*/*.py")}
    listed = {(task, name) for task, files in CATALOGUE.items() for name in files}
    assert on_disk == listed
    assert all(path.is_file() for *_, path in kernels())


def test_every_task_has_each_kind_of_stress_and_an_honest_variant():
    tasks = {task for task, *_ in kernels()}
    assert len(tasks) == 8
    for task in tasks:
        kinds = {kind for t, _, kind, _ in kernels() if t == task}
        assert {"naive", "expert", *STRESS, "honest"} <= kinds, task
    assert all(kind in KINDS for *_, kind, _ in kernels())
    assert sum(1 for _, _, kind, _ in kernels() if kind not in ("naive", "expert")) >= 48


@pytest.mark.parametrize("task, name, kind, path", [k for k in kernels() if k[2] not in ("naive", "expert")],
                         ids=lambda v: str(v) if isinstance(v, str) else "")
def test_each_file_says_what_it_stresses_and_passes_the_static_screen(task, name, kind, path):
    source = path.read_text()
    doc = ast.get_docstring(ast.parse(source))
    assert doc and "GPU" in doc and "naive" in doc, f"{task}/{name}: the docstring says what a GPU should do"
    assert check_task_module(source, path.name) == []


# A whole verification on our simulator, 5-60 s each: the findings and the honest variants, whose
# verdicts the claims rest on. Every kernel's output is checked at its scored shape by each
# run of bench/modelled_time.py (its sim_ok and gpu_ok columns); all 72 passed verify() once by hand.
@pytest.mark.e2e
@pytest.mark.parametrize("task, name, kind, path", [k for k in kernels() if k[2] in ("finding", "honest")],
                         ids=lambda v: str(v) if isinstance(v, str) else "")
def test_each_calibration_kernel_passes_the_verifier_on_our_simulator(task, name, kind, path):
    verdict = verify(task, path.read_text(), "sim", timeout=TIMEOUT)
    assert verdict.passed, [f.to_json() for f in verdict.failures]
