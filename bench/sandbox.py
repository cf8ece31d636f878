"""What the sandbox costs: a child's start, and one check through it, against the same work unboxed.

    .venv/bin/python bench/sandbox.py [--rounds 3]

1. Start: a sandboxed runner child from launch to its first answer (it imports numba, runs the
   compiler once, confines itself: seccomp, Landlock, a network namespace, rlimits), against a plain
   `python -c` doing the same warm-up with no sandbox, interleaved, fresh processes each round.
2. One check: every classic puzzle's reference through a warm sandboxed runner (request and answer
   on the wire: JSON and numpy buffers, the trace included), against check_sim on the same seed in
   this process. The difference is what the sandbox and the wire add to a check.
3. A fresh process per check: every classic reference, edited anew for every check as a learner's
   text is, as a served learner's check (built from its
   syntax tree, compiled first, run in a child forked for it from the warm fork server, which is
   killed with its folder when the verdict is in), against the same untrusted check in a warm child
   that serves every check (what main did), interleaved. The difference is what freshness costs.
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
    from tutor.engine.judge import check_sim
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


def fresh(rounds: int, backend: str = "sim", pause: float = 0.0) -> None:
    from tutor.engine.gpu import TIMING_RUNS
    from tutor.engine.runner import Runner, answer_limits
    from tutor.puzzles import load_catalog

    puzzles = [p for p in load_catalog().ordered() if p.track == "classic"]
    # on a GPU: no room queue and no simulator beside, so that the two sides differ only in the process
    options = {} if backend == "sim" else {"gpu_queue": False, "with_simulator": False}
    forked = Runner(backend, **options)
    forked.untrusted = "served"  # as GPU_TUTOR_SERVED=1 makes it: every check in a fresh child
    warm = Runner(backend, **options)  # the same untrusted checks, all in one warm child

    edits = iter(range(10**9))

    def edited(puzzle):  # a learner's every check is a new text: no compile cache helps either side
        return puzzle.reference + f"\n# edit {next(edits)}\n"

    def untrusted_in_warm_child(puzzle):
        from tutor.engine.judge import plan

        planned = plan(puzzle, 1, 3)
        request = {"op": "check", "puzzle": puzzle.id, "source": edited(puzzle), "filename": "ref.py", "seed": 1,
                   "configs": [(p.config, p.inputs) for p in planned], "timeout": warm.timeout,
                   "content": warm.content, "compile": True, "untrusted": "served"}
        with warm._lock:
            answer = warm._ask(request, limits=answer_limits(request["configs"], backend, TIMING_RUNS))
            result = warm._judged(puzzle, request, planned, answer, True)
        assert result.verdict.passed, result.verdict.to_json()
        return result

    forked.wait_ready()
    warm.wait_ready()
    rows = []
    for puzzle in puzzles:
        forked.check(puzzle.id, edited(puzzle), "ref.py", seed=1)
        untrusted_in_warm_child(puzzle)
        fresh_ms, warm_ms = [], []
        for _ in range(rounds):
            time.sleep(pause)  # the learner reads the verdict and edits: the next check's spare gets ready
            t = time.perf_counter()
            result = forked.check(puzzle.id, edited(puzzle), "ref.py", seed=1)
            fresh_ms.append((time.perf_counter() - t) * 1000)
            time.sleep(pause)
            t = time.perf_counter()
            untrusted_in_warm_child(puzzle)
            warm_ms.append((time.perf_counter() - t) * 1000)
        assert result.verdict.passed, result.verdict.to_json()
        rows.append((puzzle.id, statistics.median(fresh_ms), statistics.median(warm_ms)))
    forked.close()
    warm.close()
    where = "this machine's simulator" if backend == "sim" else f"the GPU ({_gpu_name()})"
    print(f"\none served learner's check on {where}, fresh forked child against one warm child ({rounds} rounds "
          f"each, interleaved, {pause:g} s between checks, untimed)")
    print(f"  {'puzzle':<12} {'fresh ms':>9} {'warm ms':>8} {'added ms':>9} {'ratio':>6}")
    for pid, f, w in rows:
        print(f"  {pid:<12} {f:>9.1f} {w:>8.1f} {f - w:>9.1f} {f / w:>5.2f}x")
    added = statistics.median(f - w for _, f, w in rows)
    ratio = statistics.median(f / w for _, f, w in rows)
    print(f"  median over puzzles: {added:.1f} ms added per check by a fresh process, {ratio:.2f}x")


def _gpu_name() -> str:
    from tutor.engine.gpu import device_description

    return device_description()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=("start", "checks", "fresh"), default=None)
    parser.add_argument("--backend", choices=("sim", "gpu"), default="sim",
                        help="where the fresh-process part runs its checks (gpu: on the GPU machine)")
    parser.add_argument("--pause", type=float, default=0.0,
                        help="seconds between checks, untimed, as a learner reads and edits (fresh part)")
    args = parser.parse_args()
    for part in ("start", "checks"):
        if args.only in (None, part):
            globals()[part](args.rounds)
    if args.only in (None, "fresh"):
        fresh(args.rounds, args.backend, args.pause)


if __name__ == "__main__":
    main()
