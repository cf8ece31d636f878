"""Benchmark: what a full simulator verification of every task's naive and expert kernel costs.

    python bench/verify.py                          # every task, naive and expert, with the baseline
    python bench/verify.py --only softmax,matmul    # some tasks
    python bench/verify.py --kernels expert         # one kernel
    python bench/verify.py --no-baseline            # the verification as shipped only

Not a test: it prints a table and asserts nothing about times.

Each row is one `tutor.coach.verify.verify(task, source, "sim")` of kernels/TASK/KERNEL.py, run in
this process one after another (the verifier starts its own sandboxed child each time, so every
verification compiles and runs from cold, as `gpu-tutor verify` does). "seconds" is that call's wall
time: the fixed shapes (cycled to the verifier's minimum number of cases) and the shapes drawn from
the task's `[[sim_random]]` rules. "baseline" is the same verification with the drawing switched
off (Task.random_shapes patched to draw nothing), i.e. the fixed shapes only, as verification ran
before the random shapes: measured in the same run, just before, on the same machine, so "ratio" =
seconds / baseline is what the random shapes cost. Absolute times on a shared machine are context
only.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

KERNELS = ("naive", "expert")
BUDGET_S = 20.0  # the target for one full verification of any expert kernel (naive ones are shown too)


def main(argv=None) -> int:
    from tutor.coach.tasks import kernels_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated task names (default: every task under kernels/)")
    parser.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated: naive, expert")
    parser.add_argument("--no-baseline", action="store_true", help="skip the fixed-shapes-only baseline")
    args = parser.parse_args(argv)
    tasks = args.only.split(",") if args.only else sorted(p.name for p in kernels_dir().iterdir()
                                                           if (p / "task.toml").is_file())
    rows = []
    for task in tasks:
        for kernel in args.kernels.split(","):
            base = None if args.no_baseline else measure(task, kernel, draw=False)
            rows.append((task, kernel, measure(task, kernel, draw=True), base))
            print_row(*rows[-1], header=len(rows) == 1)
    over = [f"{t}/{k}" for t, k, (s, *_), _ in rows if s > BUDGET_S]
    experts = [r for r in rows if r[1] == "expert"]
    slowest = max(experts, key=lambda r: r[2][0]) if experts else None
    print(f"\n{len(rows)} verifications; over {BUDGET_S:g} s: {', '.join(over) if over else 'none'}")
    if slowest:
        print(f"slowest expert: {slowest[0]} {slowest[2][0]:.1f} s (target {BUDGET_S:g} s: "
              f"{'met' if slowest[2][0] <= BUDGET_S else 'missed'})")
    return 0


def measure(task: str, kernel: str, *, draw: bool):
    """(seconds, the shapes drawn, passed, failure kinds) of one verification."""
    from tutor.coach import tasks as task_module
    from tutor.coach.verify import verify

    drawn = []
    real = task_module.Task.random_shapes

    def recording(self, rng):
        shapes = real(self, rng) if draw else []
        drawn.extend(shapes)
        return shapes

    source = task_module.load_task(task).source(kernel)
    with mock.patch.object(task_module.Task, "random_shapes", recording):
        start = time.monotonic()
        verdict = verify(task, source, "sim")
        seconds = time.monotonic() - start
    return seconds, drawn, verdict.passed, sorted({f.kind for f in verdict.failures})


def print_row(task, kernel, mine, base, header=False):
    seconds, drawn, passed, kinds = mine
    if header:
        print(f"{'task':<20} {'kernel':<7} {'seconds':>8} {'baseline':>9} {'ratio':>6}  {'passed':<6} random shape")
    base_s = f"{base[0]:9.1f}" if base else f"{'-':>9}"
    ratio = f"{seconds / base[0]:6.2f}" if base else f"{'-':>6}"
    verdict = "yes" if passed else "NO " + ",".join(kinds)
    if base and not base[2]:
        verdict += " (baseline failed too)"
    shapes = ", ".join(str(s) for s in drawn) or "-"
    print(f"{task:<20} {kernel:<7} {seconds:8.1f} {base_s} {ratio}  {verdict:<6} {shapes}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
