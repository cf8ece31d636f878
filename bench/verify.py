"""How long `gpu-tutor verify` takes on our simulator, for every coaching task's naive and expert
kernels and the slowest-style honest candidates we can write (tests/coach/slow_candidates/): the
goal is every correct candidate verified within 20 s on this 2-core machine.

    python bench/verify.py [--tasks softmax,matmul] [--extra DIR]

Each row is one verification in this process (its child started cold, as the optimiser's are),
wall-clock seconds; the table ends with the slowest. A row that does not pass is a bug to report,
not a time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.coach.tasks import coaching_tasks  # noqa: E402
from tutor.coach.verify import verify  # noqa: E402

GOAL_S = 20.0


def candidates(tasks: list[str] | None, extra: Path | None) -> list[tuple[str, str, str]]:
    """(task, name, source) of every kernel to verify."""
    out = []
    for task in coaching_tasks():
        if tasks and task.name not in tasks:
            continue
        for name in ("naive", "expert"):
            if (task.folder / f"{name}.py").is_file():
                out.append((task.name, f"{name}.py", task.source(name)))
        if extra is not None:
            for path in sorted((extra / task.name).glob("*.py")) if (extra / task.name).is_dir() else []:
                out.append((task.name, path.name, path.read_text(encoding="utf-8")))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: every task)")
    parser.add_argument("--extra", default=str(ROOT / "tests" / "coach" / "slow_candidates"),
                        help="a folder of <task>/*.py honest candidates to time too")
    args = parser.parse_args()
    tasks = [t for t in args.tasks.split(",") if t] or None
    extra = Path(args.extra) if args.extra and Path(args.extra).is_dir() else None
    rows = []
    for task, name, source in candidates(tasks, extra):
        started = time.perf_counter()
        verdict = verify(task, source)
        seconds = time.perf_counter() - started
        sampled = sum("blocks were simulated" in n or "no modelled time" in n for n in verdict.notes)
        rows.append((task, name, seconds, verdict.passed, verdict.kinds(), sampled, verdict.unchecked_lines))
        print(f"{task:22} {name:28} {seconds:6.1f} s  {'passed' if verdict.passed else 'FAILED ' + ','.join(verdict.kinds())}"
              f"{'  sampled shapes: ' + str(sampled) if sampled else ''}"
              f"{'  unchecked lines: ' + str(verdict.unchecked_lines) if verdict.unchecked_lines else ''}", flush=True)
        for failure in verdict.failures[:3]:  # "A row that does not pass is a bug to report": what to report
            print(f"    {failure.kind} [{failure.config}] line {failure.line}: {failure.message[:400]}", flush=True)
    print()
    print("| task | candidate | seconds | verdict | sampled shapes | unchecked lines |")
    print("|---|---|---|---|---|---|")
    for task, name, seconds, passed, kinds, sampled, unchecked in rows:
        print(f"| {task} | {name} | {seconds:.1f} | {'passed' if passed else 'failed: ' + ', '.join(kinds)} | "
              f"{sampled} | {', '.join(map(str, unchecked)) or '-'} |")
    slowest = max(rows, key=lambda r: r[2])
    over = [r for r in rows if r[2] > GOAL_S]
    print(f"\nslowest: {slowest[0]}/{slowest[1]} {slowest[2]:.1f} s; {len(over)} of {len(rows)} over {GOAL_S:g} s")
    return 0 if all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
