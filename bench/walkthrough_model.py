"""The simulator's modelled H200 time (the optimiser's score) of every walkthrough step, at each
task's scored shape, beside the GPU's measured times where kernels/TASK/walkthrough-times.json has
them: does the model rank the steps as a card does?

    python bench/walkthrough_model.py [--tasks reduce_sum,softmax]

Each step is verified on the simulator as a candidate would be (`verify`, backend sim); a step that
does not pass is a bug to report. The modelled time is taken at the scored shape, which is small
(the simulator runs every thread of it); the GPU's at the task's largest shape. Where they rank the
steps differently, the table says so: a step that pays only at a large shape may be slower at the
scored one on a card too, so a differing rank is a place to look, not a verdict on the model.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.coach.tasks import coaching_tasks  # noqa: E402
from tutor.coach.verify import verify  # noqa: E402
from tutor.coach.walkthrough import load_walkthrough  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", default="")
    args = p.parse_args()
    wanted = [t for t in args.tasks.split(",") if t]
    for task in coaching_tasks():
        if wanted and task.name not in wanted:
            continue
        walk = load_walkthrough(task)
        if walk is None:
            continue
        run = walk.runs[0] if walk.runs else None
        print(f"\n{task.name} (scored shape {tuple(task.scored_shape() or ())}; GPU: "
              f"{f'{run.device} at {tuple(run.shape)}' if run else 'not measured'})")
        print(f"  {'step':<34} {'modelled us':>12} {'model rank':>10} {'GPU ms':>9} {'GPU rank':>8}")
        rows = []
        for step in walk.steps:
            verdict = verify(task.name, step.source)
            scored = [m for m in verdict.measures if m.scored and m.modelled_s]
            us = scored[0].modelled_s * 1e6 if verdict.passed and scored else None
            rows.append((step.file, us, run.ms.get(step.file) if run else None, verdict.passed))
        model_rank = _ranks([r[1] for r in rows])
        gpu_rank = _ranks([r[2] for r in rows])
        for (file, us, ms, passed), mr, gr in zip(rows, model_rank, gpu_rank):
            print(f"  {file:<34} {'FAILED' if not passed else f'{us:.3g}' if us else '-':>12} {mr:>10} "
                  f"{f'{ms:.4g}' if ms else '-':>9} {gr:>8}")


def _ranks(values) -> list[str]:
    """1 for the fastest; '-' where there is no value."""
    known = sorted(v for v in values if v)
    return [str(known.index(v) + 1) if v else "-" for v in values]


if __name__ == "__main__":
    main()
