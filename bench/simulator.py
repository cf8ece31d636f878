"""Benchmark: our tracing simulator against Numba's CUDA simulator, and a warm full check.

    python bench/simulator.py                 # the full method: 3 interleaved rounds, then the check table
    python bench/simulator.py --rounds 5      # more rounds
    python bench/simulator.py --quick         # a smoke run (1 round, short timings): not a figure

Not a test: it prints two tables.

Table 1, ours vs Numba's simulator. Cases: the reference solution of every puzzle in content/ (one
case = one launch of each of the puzzle's fixed configs, one after the other), plus two big cases
written here: a 64x64 tiled matmul (16x16 blocks, float32 shared tiles, two syncthreads per tile) and
a 4096-thread map (16 blocks of 256, out = a + 10). "ours" is our simulator with tracing on *plus* the
post-launch detections (out of bounds, races, uninitialised reads, budgets), as a check runs them;
"numba" is Numba's simulator (NUMBA_ENABLE_CUDASIM=1) launching the same source on the same inputs.
Each round spawns one fresh process for ours and one for Numba's, alternating which goes first; each
process times every case: one warm-up launch (which also checks the output against the spec), then the
median of N launches, N chosen so a case takes about --target seconds. A case's ratio is Numba's / ours
measured in the same round; the table shows the median over rounds, the spread (min-max) of the ratio
across rounds, and the median over cases. Absolute times on a shared machine are context only.

Table 2, a full check inside a warm child: tutor.engine.runner.Runner("sim") started once and warmed,
then per classic puzzle the median of several `runner.check(id, reference, compile=False)` calls
(every fixed and random config, traced, detections, verdict pickled back), the same with
compile=True on a source compiled once already (the compile cache hits), and with compile=True on a
never-seen source (a unique comment is appended, so the real Numba compiler runs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

SEED = 20240601
TARGET_OURS = 100.0  # x faster than Numba's simulator, median case
TARGET_BIG = 50.0  # x faster than Numba's simulator, every case with a launch of 1,000 threads or more
TARGET_CHECK_MS = 100.0  # sim-only full check of a classic puzzle

MATMUL64 = '''\
import numba
from numba import cuda

TPB = 16


@cuda.jit
def kernel(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    i, j = cuda.grid(2)
    ti = cuda.threadIdx.x
    tj = cuda.threadIdx.y
    total = numba.float32(0)
    for t in range((size + TPB - 1) // TPB):
        start = t * TPB
        if i < size and start + tj < size:
            a_tile[ti, tj] = a[i, start + tj]
        else:
            a_tile[ti, tj] = 0
        if start + ti < size and j < size:
            b_tile[ti, tj] = b[start + ti, j]
        else:
            b_tile[ti, tj] = 0
        cuda.syncthreads()
        for k in range(TPB):
            total += a_tile[ti, k] * b_tile[k, tj]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total
'''

MAP4096 = '''\
from numba import cuda


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    if i < size:
        out[i] = a[i] + 10
'''


# -- the cases, built the same way in both workers ---------------------------------------------------
class Case:
    """name, source, and launches: [(label, blocks, threads, [(name, value)...], expected, budget, tol)]."""

    def __init__(self, name, source, launches, kind):
        self.name = name
        self.source = source
        self.launches = launches
        self.kind = kind


def build_cases(only=None):
    import numpy as np

    from tutor.engine.judge import fresh_output, make_inputs
    from tutor.puzzles import load_catalog

    cases = []
    for puzzle in load_catalog().ordered():
        if only and puzzle.id not in only:
            continue
        launches = []
        for n, config in enumerate(puzzle.configs):
            rng = np.random.default_rng(SEED + n)
            inputs, expected = make_inputs(puzzle, config, rng)
            named = [("out", fresh_output(config))] + list(inputs.items())
            launches.append((config.name, tuple(config.blocks), tuple(config.threads), named, expected,
                             puzzle.budget_for(config), puzzle.tolerance))
        cases.append(Case(puzzle.id, puzzle.reference, launches, puzzle.track))

    rng = np.random.default_rng(SEED)
    if not only or "matmul64" in only:
        size = 64
        a = rng.integers(-9, 10, size=(size, size)).astype(np.float32)
        b = rng.integers(-9, 10, size=(size, size)).astype(np.float32)
        out = np.zeros((size, size), np.float32)
        cases.append(Case("matmul64", MATMUL64, [(
            "64x64, 4x4 blocks of 16x16", (4, 4), (16, 16), [("out", out), ("a", a), ("b", b), ("size", size)],
            a @ b, {"global_reads": 2 * (size // 16), "global_writes": 1}, 1e-5)], "big"))
    if not only or "map4096" in only:
        size = 4096
        a = rng.integers(-9, 10, size=size).astype(np.float32)
        out = np.zeros(size, np.float32)
        cases.append(Case("map4096", MAP4096, [(
            "4096, 16 blocks of 256", (16,), (256,), [("out", out), ("a", a), ("size", size)],
            a + np.float32(10), {"global_reads": 1, "global_writes": 1}, 1e-5)], "big"))
    return cases


def fresh_args(named):
    """Per launch, untimed: a zeroed output and copies of the inputs (kernels may write them)."""
    import numpy as np

    args = []
    for k, v in named:
        if isinstance(v, np.ndarray):
            args.append((k, np.zeros_like(v) if k == "out" else v.copy()))
        else:
            args.append((k, v))
    return args


# -- workers ------------------------------------------------------------------------------------------
def worker_ours(cases, lanes_on=True):
    from tutor.engine.sim import lanes

    lanes.ENABLED = lanes_on
    from tutor.engine.analysis import detect
    from tutor.engine.analysis.counters import count
    from tutor.engine.loading.sim_loader import load_for_sim
    from tutor.engine.sim.launch import Launch

    runners = []
    for case in cases:
        module = load_for_sim(case.source, "ref.py")

        def run_once(case=case, module=module, check=False):
            total = detecting = counting = 0.0
            problems = []
            for label, blocks, threads, named, expected, budget, tol in case.launches:
                args = fresh_args(named)
                started = time.perf_counter()
                trace = Launch(module.kernel, blocks, threads, args, source_lines=module.lines).run()
                launched = time.perf_counter()
                failures = detect.find_all(trace, None, budget)
                detected = time.perf_counter()
                count(trace, case.source)  # the memory counters every verdict carries
                stopped = time.perf_counter()
                total += detected - started  # as before the counters: the ratio compares like with like
                detecting += detected - launched
                counting += stopped - detected
                if check:
                    problems += _problems(label, args[0][1], expected, tol)
                    problems += [f"{label}: {f.kind}" for f in failures]
            return total, detecting, problems, counting

        runners.append((case, run_once))
    return runners


def worker_numba(cases):
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import numpy as np

    if not hasattr(np, "row_stack"):  # numba-cuda 0.30 on numpy 2.5 (see tutor/engine/gpu.py)
        np.row_stack = np.vstack
    from numba import config

    if not config.ENABLE_CUDASIM:
        raise SystemExit("numba worker: NUMBA_ENABLE_CUDASIM did not take effect")
    runners = []
    for case in cases:
        ns = {"__name__": "ref", "__file__": "ref.py"}
        exec(compile(case.source, "ref.py", "exec"), ns)
        kernel = ns["kernel"]

        def run_once(case=case, kernel=kernel, check=False):
            total = 0.0
            problems = []
            for label, blocks, threads, named, expected, budget, tol in case.launches:
                args = fresh_args(named)
                values = [v for _, v in args]
                started = time.perf_counter()
                kernel[blocks, threads](*values)
                total += time.perf_counter() - started
                if check:
                    problems += _problems(label, values[0], expected, tol)
            return total, 0.0, problems

        runners.append((case, run_once))
    return runners


def _problems(label, got, expected, tol):
    import numpy as np

    got = np.asarray(got)
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        if got.size == expected.size:
            expected = expected.reshape(got.shape)
        else:
            return [f"{label}: output shape {got.shape} != {expected.shape}"]
    if not np.allclose(got, expected, rtol=tol, atol=tol):
        return [f"{label}: wrong output"]
    return []


def _lacks(exc: BaseException) -> str:
    """A short reason a case cannot run on Numba's simulator."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, AttributeError) and "has no attribute" in text:
        attr = text.rsplit("attribute", 1)[1].strip(" '\"")
        return f"n/a: numba-sim lacks {attr}"
    return f"n/a: numba-sim fails ({type(exc).__name__}: {text[:60]})"


def run_worker(which, args):
    if which == "numba":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # before anything could import numba
    only = set(args.only.split(",")) if args.only else None
    cases = build_cases(only)
    runners = worker_numba(cases) if which == "numba" else worker_ours(cases, lanes_on=which == "ours")
    results = {}
    for case, run_once in runners:
        entry = {"launches": len(case.launches), "kind": case.kind,
                 "threads": max(math.prod(b) * math.prod(t) for _, b, t, *_ in case.launches)}
        try:
            if which != "numba":
                from tutor.engine.sim import lanes

                lanes.TALLY.clear()
            warm, _, problems, *_ = run_once(check=True)  # warm-up, and is the output right?
            if which == "ours":
                ran = lanes.TALLY.pop("lanes", 0)
                why = next(iter(lanes.TALLY), f"blocks under {lanes.MIN_THREADS} threads")
                entry["lanes"] = ("yes" if not lanes.TALLY else f"{ran} of {ran + sum(lanes.TALLY.values())}") \
                    if ran else f"no: {why}"
        except Exception as e:  # noqa: BLE001 - a simulator that cannot run this case
            entry["error"] = _lacks(e) if which == "numba" else f"failed: {type(e).__name__}: {e}"
            results[case.name] = entry
            continue
        n = max(args.min_n, min(args.max_n, math.ceil(args.target / max(warm, 1e-6))))
        samples = [run_once() for _ in range(n)]
        entry.update(ms=statistics.median(s[0] for s in samples) * 1e3,
                     detect_ms=statistics.median(s[1] for s in samples) * 1e3,
                     count_ms=statistics.median(s[3] for s in samples) * 1e3 if len(samples[0]) > 3 else None,
                     n=n, warmup_ms=warm * 1e3, problems=problems)
        results[case.name] = entry
        print(f"  [{which}] {case.name}: {entry['ms']:.2f} ms (n={n})", file=sys.stderr, flush=True)
    json.dump(results, sys.stdout)
    return 0


# -- the warm-child check table -----------------------------------------------------------------------
def check_table(args):
    from tutor.engine.runner import Runner
    from tutor.puzzles import load_catalog

    catalog = load_catalog()
    classic = [t for t in catalog.tracks if t.id == "classic"]
    puzzles = [catalog.get(p) for t in classic for p in t.puzzles]
    if args.only:
        puzzles = [p for p in puzzles if p.id in args.only.split(",")]
    from tutor.engine.loading.compile import nvvm_missing

    missing = nvvm_missing()  # in this process only to say whether compile=True really compiles
    rows = []
    runner = Runner("sim")
    try:
        started = time.perf_counter()
        runner.start()
        first = runner.check(puzzles[0].id, puzzles[0].reference, "reference.py", seed=0, compile=True)
        start_s = time.perf_counter() - started
        if not first.verdict.passed:
            print(f"warning: warm-up check of {puzzles[0].id} did not pass", file=sys.stderr)
        for puzzle in puzzles:
            ref = puzzle.reference
            filename = f"{puzzle.id}/reference.py"

            def timed(source, compile, seed, puzzle=puzzle, filename=filename):
                t0 = time.perf_counter()
                result = runner.check(puzzle.id, source, filename, seed=seed, compile=compile)
                ms = (time.perf_counter() - t0) * 1e3
                if not result.verdict.passed:
                    raise RuntimeError(f"{puzzle.id}: reference check failed: "
                                       f"{[f.kind for f in result.verdict.failures]}")
                return ms, len(result.verdict.configs)

            timed(ref, False, 0)  # warm this puzzle (its spec module, its first launches)
            timed(ref, True, 0)  # compiles once: the cached column hits from here on
            sim = [timed(ref, False, SEED + k) for k in range(args.check_reps)]
            cached = [timed(ref, True, SEED + k)[0] for k in range(args.check_reps)]
            fresh = [timed(ref + f"\n# bench {uuid.uuid4().hex}\n", True, SEED + k)[0]
                     for k in range(args.fresh_reps)]
            sim_ms = [s[0] for s in sim]
            rows.append((puzzle.id, sim[0][1], statistics.median(sim_ms), min(sim_ms), max(sim_ms),
                         statistics.median(cached), statistics.median(fresh)))
            print(f"  [check] {puzzle.id}: {rows[-1][2]:.1f} ms", file=sys.stderr, flush=True)
    finally:
        runner.close()
    return rows, start_s, missing


# -- the parent ---------------------------------------------------------------------------------------
def spawn(which, args):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", which, "--target", str(args.target),
           "--min-n", str(args.min_n), "--max-n", str(args.max_n)]
    if args.only:
        cmd += ["--only", args.only]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    env.pop("NUMBA_ENABLE_CUDASIM", None)  # the numba worker sets it itself; ours never imports numba
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"worker {which} failed with status {proc.returncode}")
    return json.loads(proc.stdout)


def fmt_ms(ms):
    if ms is None:
        return "-"
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    return f"{ms:.2f}"


def table(headers, rows, align):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(str(c).ljust(w) if a == "<" else str(c).rjust(w)
                         for c, w, a in zip(cells, widths, align)).rstrip()

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds of fresh processes (default 3)")
    p.add_argument("--target", type=float, default=0.3, help="seconds of timed launches per case (default 0.3)")
    p.add_argument("--min-n", type=int, default=1, help="fewest timed launches per case (default 1)")
    p.add_argument("--max-n", type=int, default=500, help="most timed launches per case (default 500)")
    p.add_argument("--check-reps", type=int, default=5, help="timed checks per puzzle and column (default 5)")
    p.add_argument("--fresh-reps", type=int, default=3, help="timed fresh-compile checks per puzzle (default 3)")
    p.add_argument("--only", help="comma-separated case names (puzzle ids, matmul64, map4096)")
    p.add_argument("--no-check", action="store_true", help="skip the warm-child check table")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 round, short timings (not a figure)")
    p.add_argument("--worker", choices=("ours", "threads", "numba"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.rounds, args.target, args.min_n, args.check_reps, args.fresh_reps = 1, 0.05, 1, 1, 1
    if args.worker:
        return run_worker(args.worker, args)

    t_start = time.perf_counter()
    per_round = []  # [{"ours": {...}, "numba": {...}}]
    for r in range(args.rounds):
        order = ("ours", "threads", "numba") if r % 2 == 0 else ("numba", "threads", "ours")
        print(f"round {r + 1}/{args.rounds}: {', then '.join(order)}", file=sys.stderr, flush=True)
        got = {}
        for which in order:
            got[which] = spawn(which, args)
        per_round.append(got)

    names = list(per_round[0]["ours"])
    rows = []
    case_ratios = []
    round_ratios = [[] for _ in per_round]
    notes = []
    big_ratios = []  # (case, ratio) for cases with a launch of 1,000 threads or more
    for name in names:
        ours = [rd["ours"][name] for rd in per_round]
        numba = [rd["numba"][name] for rd in per_round]
        threads = [rd["threads"][name] for rd in per_round]
        launches = ours[0]["launches"]
        lanes_note = ours[0].get("lanes", "")
        threads_ms = statistics.median(t["ms"] for t in threads) if not any("error" in t for t in threads) else None
        if any("error" in o for o in ours):
            rows.append((name, launches, "-", "-", "-", "-", "-", "-", "", "", "", ours[0].get("error", "failed")))
            continue
        vs_threads = f"{threads_ms / statistics.median(o['ms'] for o in ours):.1f}x" if threads_ms else "-"
        ours_ms = statistics.median(o["ms"] for o in ours)
        detect_ms = statistics.median(o["detect_ms"] for o in ours)
        count_ms = statistics.median(o["count_ms"] for o in ours)
        ns = [o["n"] for o in ours]
        for o in ours + numba:
            for prob in o.get("problems", []):
                note = f"{name}: {prob}"
                if note not in notes:
                    notes.append(note)
        err = next((nb["error"] for nb in numba if "error" in nb), None)
        if err:
            rows.append((name, launches, fmt_ms(ours_ms), fmt_ms(detect_ms), fmt_ms(count_ms),
                         fmt_ms(threads_ms) if threads_ms else "-", vs_threads, "-", "n/a", "",
                         f"{min(ns)}-{max(ns)}/-", f"{lanes_note}; numba: {err}"))
            continue
        numba_ms = statistics.median(nb["ms"] for nb in numba)
        ratios = [nb["ms"] / o["ms"] for o, nb in zip(ours, numba)]
        for k, x in enumerate(ratios):
            round_ratios[k].append(x)
        ratio = statistics.median(ratios)
        case_ratios.append(ratio)
        if ours[0].get("threads", 0) >= 1000:
            big_ratios.append((name, ratio))
        nn = [nb["n"] for nb in numba]
        rows.append((name, launches, fmt_ms(ours_ms), fmt_ms(detect_ms), fmt_ms(count_ms),
                     fmt_ms(threads_ms) if threads_ms else "-", vs_threads, fmt_ms(numba_ms),
                     f"{ratio:.0f}x",
                     f"{min(ratios):.0f}-{max(ratios):.0f}x", f"{min(ns)}-{max(ns)}/{min(nn)}-{max(nn)}",
                     lanes_note))

    print("ours (tracing simulator + detections; '(detect)' is the detections' share) vs Numba's simulator "
          "(NUMBA_ENABLE_CUDASIM=1); ratio = numba / ours, same round")
    print(f"{args.rounds} round(s) of fresh processes, order alternating; per case: 1 warm-up launch, then the "
          f"median of N launches (~{args.target:g} s, N >= {args.min_n}); times in ms per case "
          f"(all of its fixed configs, one launch each); '(count)': the memory counters every verdict now carries, "
          f"counted after the detections, on top of 'ours ms'")
    print()
    print("'threads ms': our simulator with the lanes off (every thread a greenlet, as before the lanes), "
          "same detections, measured in the same round; 'vs threads' = threads / ours; 'as lanes': whether "
          "the case's launches ran as lanes (sim/lanes.py), or why not")
    print()
    print(table(["case", "launches", "ours ms", "(detect)", "(count)", "threads ms", "vs threads", "numba ms",
                 "ratio", "ratio min-max", "N ours/numba", "as lanes"], rows, "<>>>>>>>>><<"))
    print()
    if case_ratios:
        median_ratio = statistics.median(case_ratios)
        round_medians = [statistics.median(rr) for rr in round_ratios if rr]
        verdict = "met" if median_ratio >= TARGET_OURS else "NOT met"
        print(f"median ratio over {len(case_ratios)} cases: {median_ratio:.0f}x  (per round: "
              f"{', '.join(f'{x:.0f}x' for x in round_medians)}; spread {min(round_medians):.0f}-"
              f"{max(round_medians):.0f}x)  target >= {TARGET_OURS:.0f}x: {verdict}")
        print(f"lowest case ratio: {min(case_ratios):.0f}x; highest: {max(case_ratios):.0f}x")
        if big_ratios:
            low = min(big_ratios, key=lambda b: b[1])
            verdict = "met" if low[1] >= TARGET_BIG else "NOT met"
            print(f"cases with a launch of 1,000 threads or more: {len(big_ratios)}; lowest ratio {low[1]:.0f}x "
                  f"({low[0]}); target >= {TARGET_BIG:.0f}x on each: {verdict} "
                  f"({', '.join(f'{n} {r:.0f}x' for n, r in big_ratios)})")
    skipped = [r[0] for r in rows if str(r[8]).startswith("n/a")]
    if skipped:
        print(f"left out of the median (cannot run on Numba's simulator): {', '.join(skipped)}")
    for note in notes:
        print(f"note: {note}")
    print(f"(benchmark part took {time.perf_counter() - t_start:.0f} s)")

    if not args.no_check:
        print(file=sys.stderr)
        t1 = time.perf_counter()
        rows, start_s, missing = check_table(args)
        print()
        print("full check of each classic puzzle in a warm child (Runner('sim'), started once; every fixed and "
              "random config traced, detections, verdict and traces sent back)")
        print(f"median of {args.check_reps} checks (seeds vary, same seeds in each column); fresh compile: "
              f"median of {args.fresh_reps}")
        if missing:
            print(f"NOTE: the real compiler is not available here, so compile=True skips it: {missing}")
        print()
        out = [(pid, n, fmt_ms(sim), f"{fmt_ms(lo)}-{fmt_ms(hi)}", fmt_ms(cached), fmt_ms(fresh),
                "yes" if sim < TARGET_CHECK_MS else "NO")
               for pid, n, sim, lo, hi, cached, fresh in rows]
        print(table(["puzzle", "configs", "sim-only ms", "min-max", "cached compile ms", "fresh compile ms",
                     f"< {TARGET_CHECK_MS:.0f} ms"], out, "<>>>>><"))
        sims = [r[2] for r in rows]
        print()
        print(f"sim-only check: median over puzzles {fmt_ms(statistics.median(sims))} ms, slowest "
              f"{fmt_ms(max(sims))} ms ({rows[sims.index(max(sims))][0]}); target < {TARGET_CHECK_MS:.0f} ms: "
              f"{'met' if max(sims) < TARGET_CHECK_MS else 'NOT met'} for {sum(s < TARGET_CHECK_MS for s in sims)}"
              f"/{len(sims)} puzzles")
        print(f"(child start + first check with compile: {start_s:.1f} s; check part took "
              f"{time.perf_counter() - t1:.0f} s)")
    print(f"total {time.perf_counter() - t_start:.0f} s on {os.cpu_count()} CPU(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
