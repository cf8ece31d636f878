"""One judge on every backend: every puzzle's reference, every honest solution in tests/honest and
every one-defect file in tests/content/test_wrong_solutions.py, checked with the same seed on our
simulator and on a GPU (or Numba's simulator); and every coaching task's naive and expert kernels
verified on both. A row agrees when the verdicts pass or fail together with the same failure kinds
(on a GPU our simulator runs beside it, so its kinds are a superset of what a GPU alone sees).

    python bench/backends.py --backend gpu [--jobs 8] [--out results.md] [--only puzzles|tasks]

Prints a markdown table and the disagreements; exits 1 when any row disagrees.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "content"))

SEED = 11


def puzzle_files() -> list[tuple[str, str, str, str | None]]:
    """(puzzle, name, source, the kind a one-defect file must show or None) of every file to check."""
    from tutor.puzzles import load_catalog

    catalog = load_catalog()
    out = [(p.id, "reference.py", p.reference, None) for p in catalog.ordered()]
    for folder in sorted((ROOT / "tests" / "honest").glob("*")):
        for path in sorted(folder.glob("*.py")):
            out.append((folder.name, f"honest/{path.name}", path.read_text(encoding="utf-8"), None))
    import test_wrong_solutions as wrong

    for param in wrong.WRONG:
        pid, kind, source, _seed = param.values
        out.append((pid, f"defect/{param.id}", source, kind))
    return out


def check_all(backend: str, files, jobs: int) -> list:
    from tutor.engine.runner import Runner

    runners = [Runner(backend, timeout=60) for _ in range(jobs)] if backend == "sim" else \
        [Runner(backend, timeout=60, gpu_queue=False) for _ in range(jobs)]
    try:
        def one(n):
            runner = runners[n % jobs]
            pid, name, source, _ = files[n]
            started = time.perf_counter()
            try:
                verdict = runner.check(pid, source, f"{pid}.py", seed=SEED).verdict
                return verdict.passed, sorted(set(verdict.kinds())), time.perf_counter() - started
            except Exception as e:  # a bug of ours: a row of its own
                return False, [f"error: {type(e).__name__}: {e}"[:120]], time.perf_counter() - started

        with ThreadPoolExecutor(jobs) as pool:  # a runner serves one request at a time: one thread each
            return list(pool.map(one, range(len(files))))
    finally:
        for r in runners:
            r.close()


def verify_all(backend: str, jobs: int, device_jobs: int = 1) -> list:
    from tutor.coach.tasks import coaching_tasks
    from tutor.coach.verify import verify

    rows = [(t.name, name, t.source(name)) for t in coaching_tasks() for name in ("naive", "expert")]

    def one(row):
        task, name, source = row
        started = time.perf_counter()
        v = verify(task, source, backend)
        row = task, name, v.passed, sorted(set(v.kinds())), time.perf_counter() - started, \
            (v.timing.speedup if v.timing else None)
        print(f"{backend}: {row}", flush=True)  # a run cut short still shows what it finished
        return row

    # GPU timings one at a time unless asked (then the verdicts hold and the times are rough)
    with ThreadPoolExecutor(jobs if backend == "sim" else device_jobs) as pool:
        return list(pool.map(one, rows))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="gpu", choices=("gpu", "numba-sim"))
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--only", choices=("puzzles", "tasks"), default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--limit", type=int, default=0, help="only the first N puzzle files (a quick look)")
    parser.add_argument("--device-jobs", type=int, default=1, help="task verifications at once on the device")
    parser.add_argument("--skip-sim", action="store_true", help="tasks: verify on the device only")
    args = parser.parse_args()
    lines, bad = [], 0
    if args.only in (None, "puzzles"):
        files = puzzle_files()[:args.limit or None]
        started = time.perf_counter()
        ours = check_all("sim", files, args.jobs)
        theirs = check_all(args.backend, files, args.jobs)
        lines += [f"## Puzzles: {len(files)} files, seed {SEED}, sim and {args.backend} "
                  f"({time.perf_counter() - started:.0f} s)", "",
                  f"| puzzle | file | sim | {args.backend} | agree |", "|---|---|---|---|---|"]
        for (pid, name, _, expect), (p1, k1, _), (p2, k2, _) in zip(files, ours, theirs):
            same = p1 == p2 and (set(k1) <= set(k2) if args.backend == "gpu" else set(k1) == set(k2))
            meant = expect is None and p1 or expect is not None and expect in k1
            bad += not (same and meant)
            lines.append(f"| {pid} | {name} | {'pass' if p1 else ', '.join(k1)} | {'pass' if p2 else ', '.join(k2)} | "
                         f"{'yes' if same and meant else '**no**'} |")
    if args.only in (None, "tasks"):
        theirs = verify_all(args.backend, args.jobs, args.device_jobs)
        ours = [(t, n, None, [], 0.0, None) for t, n, *_ in theirs] if args.skip_sim else verify_all("sim", args.jobs)
        lines += ["", f"## Coaching tasks: naive and expert, verified on sim and {args.backend}", "",
                  f"| task | kernel | sim | sim s | {args.backend} | {args.backend} s | speedup over naive | agree |",
                  "|---|---|---|---|---|---|---|---|"]
        for a, b in zip(ours, theirs):
            same = b[2] if a[2] is None else a[2] and b[2]  # None: not run on the simulator here
            bad += not same
            lines.append(f"| {a[0]} | {a[1]} | {'-' if a[2] is None else 'pass' if a[2] else ', '.join(a[3])} | {a[4]:.1f} | "
                         f"{'pass' if b[2] else ', '.join(b[3])} | {b[4]:.1f} | "
                         f"{'' if b[5] is None else f'{b[5]:.2f}x'} | {'yes' if same else '**no**'} |")
    text = "\n".join(lines) + f"\n\n{bad} row(s) disagree\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
