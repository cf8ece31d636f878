"""Time every step of the coaching tasks' walkthroughs on a GPU (tutor/coach/walkthrough.py), each
checked against the reference first, and write kernels/TASK/walkthrough-times.json.

    python bench/walkthrough.py [--tasks reduce_sum,softmax] [--runs 20]

One run per device is kept in each times file (this device's replaces its earlier one; other
devices' stay), so the walkthrough can show an H100's and an H200's figures side by side. A step
that fails its check is reported and left out of the file, never timed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from expert_sweep import check_cases, checked_timing, device_name  # noqa: E402
from tutor.coach.tasks import coaching_tasks  # noqa: E402
from tutor.coach.walkthrough import TIMES_FILE, load_walkthrough  # noqa: E402
from tutor.engine.gpu import import_cuda  # noqa: E402
from tutor.engine.process.gpu_timing import Timer  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", default="")
    p.add_argument("--runs", type=int, default=20)
    args = p.parse_args()
    cuda = import_cuda()
    timer = Timer(cuda)
    device = device_name(cuda)
    wanted = [t for t in args.tasks.split(",") if t]
    for task in coaching_tasks():
        if wanted and task.name not in wanted:
            continue
        walk = load_walkthrough(task)
        if walk is None:
            continue
        cases = check_cases(task)
        ms = {}
        for step in walk.steps:
            try:
                ms[step.file] = checked_timing(cuda, timer, task, step.source, cases, args.runs)["ms"]
                print(f"{task.name:<20} {step.file:<32} {ms[step.file]:10.4f} ms")
            except Exception as e:  # noqa: BLE001 (a step that fails is reported, not timed)
                print(f"{task.name:<20} {step.file:<32} not timed: {type(e).__name__}: {str(e)[:150]}")
        path = task.folder / TIMES_FILE
        runs = json.loads(path.read_text())["runs"] if path.is_file() else []
        runs = [r for r in runs if r.get("device") != device] + [{
            "device": device, "date": datetime.date.today().isoformat(), "shape": list(cases[-1][0]),
            "command": f"python bench/walkthrough.py --tasks {task.name} --runs {args.runs}", "ms": ms}]
        path.write_text(json.dumps({"runs": runs}, indent=1) + "\n")
        print(f"{task.name}: wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
