"""What the sandbox costs: a child's start, and one check through it, against the same work unboxed.

    .venv/bin/python bench/sandbox.py [--rounds 3]

1. Start: a sandboxed runner child from launch to its first answer (it imports numba, runs the
   compiler once, confines itself: seccomp, Landlock, a network namespace, rlimits), against a plain
   `python -c` doing the same warm-up with no sandbox, interleaved, fresh processes each round.
2. One check: every classic puzzle's reference through a warm sandboxed runner (request and answer
   on the wire: JSON and numpy buffers, the trace included), against check_sim on the same seed in
   this process. The difference is what the sandbox and the wire add to a check.
Ratios measured in the same run are the figures; absolute times on a shared machine are context.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def start(rounds: int) -> None:
    from tutor.engine.runner import Runner

    boxed, plain = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        runner = Runner("sim")
        runner.wait_ready()
        boxed.append(time.perf_counter() - t)
        runner.close()
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from tutor.engine.child import warm_up; warm_up('sim')"],
                       cwd=ROOT, check=True)
        plain.append(time.perf_counter() - t)
    ratios = [b / p for b, p in zip(boxed, plain)]
    print(f"child start to first answer ({rounds} rounds, interleaved)")
    print(f"  sandboxed runner child: median {statistics.median(boxed) * 1000:.0f} ms")
    print(f"  plain warm-up process:  median {statistics.median(plain) * 1000:.0f} ms")
    print(f"  ratio boxed/plain:      median {statistics.median(ratios):.2f}x "
          f"(spread {min(ratios):.2f}-{max(ratios):.2f}x)")


def checks(rounds: int) -> None:
    from tutor.engine.check import check_sim
    from tutor.engine.runner import Runner
    from tutor.puzzles import load_catalog

    catalog = load_catalog()
    puzzles = [p for p in catalog.ordered() if p.track == "classic"]
    runner = Runner("sim")
    rows = []
    for puzzle in puzzles:
        runner.check(puzzle.id, puzzle.reference, "ref.py", seed=1)  # compile caches warm on both sides
        check_sim(puzzle, puzzle.reference, "ref.py", seed=1)
        boxed, here = [], []
        for _ in range(rounds):
            t = time.perf_counter()
            result = runner.check(puzzle.id, puzzle.reference, "ref.py", seed=1)
            boxed.append(time.perf_counter() - t)
            t = time.perf_counter()
            check_sim(puzzle, puzzle.reference, "ref.py", seed=1)
            here.append(time.perf_counter() - t)
        assert result.verdict.passed, result.verdict.to_json()
        events = sum(len(r.trace.events) for r in result.runs if r.trace is not None)
        rows.append((puzzle.id, statistics.median(boxed) * 1000, statistics.median(here) * 1000, events))
    runner.close()
    print(f"\none check, warm, every classic reference ({rounds} rounds each, interleaved)")
    print(f"  {'puzzle':<12} {'sandboxed ms':>12} {'in-process ms':>13} {'added ms':>9} {'ratio':>6} {'events':>7}")
    for pid, boxed, here, events in rows:
        print(f"  {pid:<12} {boxed:>12.1f} {here:>13.1f} {boxed - here:>9.1f} {boxed / here:>5.2f}x {events:>7}")
    added = statistics.median(b - h for _, b, h, _ in rows)
    ratio = statistics.median(b / h for _, b, h, _ in rows)
    print(f"  median over puzzles: {added:.1f} ms added per check, {ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    start(args.rounds)
    checks(args.rounds)


if __name__ == "__main__":
    main()
