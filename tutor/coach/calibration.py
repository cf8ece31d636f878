"""Whether a modelled score is one the GPU has confirmed.

The simulator's score is a model's (engine/analysis/modelled_time.py). bench/modelled_time.py
times the model's kernels and kernels written to stress it (tests/coach/calibration/: serial
chains, divergent lanes, local memory, heavy arithmetic) on a real GPU, and writes what it found
to kernels/calibration.json: per task, the largest speedup over the naive kernel that both the
model and the GPU agree on; per bound (latency, issue, memory pipe, ...), whether the model placed
a kernel of that bound faster than naive while the GPU measured it slower.

A score is "modelled; unconfirmed" where the calibration says the model can be wrong about it: its
kernel's bound is one the GPU contradicted, or it claims more over naive than the GPU has ever
confirmed for the task. Such a score is flagged (engine Verdict flags: not trusted), so the
optimiser never keeps it as its best over a trusted one, and the learner reads why.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

CALIBRATION = Path(__file__).resolve().parents[2] / "kernels" / "calibration.json"
BEYOND = 1.5  # a claim this many times past the largest confirmed speedup is past what was calibrated


@lru_cache(maxsize=4)
def load(path: Path = CALIBRATION) -> dict:
    """The calibration record, or {} where there is none (a task of the tests' own, a fresh clone)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def judged(task: str, score: float, kernels: list, record: dict | None = None) -> tuple[str, str, bool]:
    """(what to call the score, the sentence that says why, whether it is unconfirmed).
    `kernels`: the scored record's modelled kernels (each with its "bound" and "seconds")."""
    record = load() if record is None else record
    card = record.get("card", "a GPU")
    tasks = record.get("tasks") if isinstance(record.get("tasks"), dict) else {}
    if task not in tasks:
        return "modelled", f"modelled; not calibrated on a GPU for {task}", False
    bounds = {k.get("bound") for k in kernels if isinstance(k, dict)}
    heaviest = max((k for k in kernels if isinstance(k, dict)), key=lambda k: k.get("seconds", 0), default={})
    contradicted = set(record.get("unconfirmed_bounds") or ())
    if score > 1 and heaviest.get("bound") in contradicted:
        return "modelled; unconfirmed", (
            f"modelled; unconfirmed: its slowest kernel is {heaviest.get('bound')}-bound, and on the {card} the "
            f"model placed such kernels faster than naive that measured slower (bench/modelled_time.py)"), True
    up_to = tasks[task].get("confirmed_up_to")
    if isinstance(up_to, (int, float)) and score > BEYOND * max(1.0, up_to):
        return "modelled; unconfirmed", (
            f"modelled; unconfirmed: {score:.3g}x over naive is past anything the {card} confirmed for {task} "
            f"(up to {up_to:.3g}x, bench/modelled_time.py); time it on a GPU (--backend gpu)"), True
    return "modelled; calibrated", (f"modelled; calibrated on the {card}: the model's order of this task's kernels "
                                    f"held there ({', '.join(sorted(b for b in bounds if b))}-bound)"), False
