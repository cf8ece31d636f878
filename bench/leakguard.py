"""How well does the AI hints' leak guard tell a give-away from an honest hint? The suites of
tests/ai/leak_suite.py, judged by the real guard with the real checker in the engine's child.

    .venv/bin/python bench/leakguard.py                  # the guard in this tree (2 to 3 min on 2 shared cores)
    .venv/bin/python bench/leakguard.py --against HEAD   # and, beside it, the guard of a git revision
    .venv/bin/python bench/leakguard.py --puzzles dot shared map

Two suites. The markup suite: every form of give-away a model has used (fenced, indented, `~~~`,
`<pre><code>`, `>>>` prompts, pieces shuffled or with a name renamed, a typo, a typo with every
name the model's own, comments, a docstring, a string, a fullwidth plus, zero-width spaces, plain
lines of prose, inline spans, a blockquote), each generated from the reference of seven puzzles
with shared memory and barriers, judged with the starter as the learner's file, and more honest
hints than that (nudges that quote a guard, an `else:`, a loop header, a barrier, one line, the
starter or the learner's own code, every right-hand side; and every authored hint of every puzzle).
The normalisation suite (part 4 of "Scores and hints that mean what they say"): every puzzle's
reference with a trivial change that stops it running, or all of them at once (another kernel
name, no decorator, parameters swapped, the body in a helper with or without its decorator or
with names of its own, every local renamed, the index written out in inline spans), each judged
against three learner files (the starter, the reference without its barriers, the reference
without its last statement); and fragment hints written by hand for every puzzle of the classic
and advanced tracks.

Reported per form: how many were withheld by reading alone ("read": no code run), how many only
once their code ran ("ran"), how many leaked; per honest form, the false withholds; the totals;
what one judgement costs (its time, and how many modules it ran in the checker's child). The goal:
0 leaks and 0 false withholds.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "ai"))  # the suite lives with the tests that hold it to 0 and 0

from leak_suite import disguise_cases, fragment_cases, honest_cases, leak_cases  # noqa: E402

from tutor.ai import leakguard  # noqa: E402
from tutor.ai.hints import SimChecker  # noqa: E402
from tutor.engine.runner import Runner  # noqa: E402
from tutor.puzzles import load_catalog  # noqa: E402

STATES = ("the starter", "all but the barriers", "all but the last statement")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", default=None, help="a git revision whose tutor/ai/leakguard.py to judge too")
    parser.add_argument("--puzzles", nargs="*", default=None, help="only these puzzles")
    args = parser.parse_args()
    catalog = load_catalog()
    guards = {"now": leakguard}
    if args.against:
        guards[args.against] = _guard_at(args.against)
    suites = {"markup": leak_cases(catalog) + honest_cases(catalog),
              "normalised": disguise_cases(catalog) + fragment_cases(catalog)}
    if args.puzzles:
        suites = {name: [c for c in cases if c.puzzle in args.puzzles] for name, cases in suites.items()}
    started = time.perf_counter()
    with Runner("sim") as runner:
        runner.wait_ready()
        results = {name: {suite: [_judge(module, catalog, runner, case) for case in cases]
                          for suite, cases in suites.items()} for name, module in guards.items()}
    wall = time.perf_counter() - started
    for name in guards:
        print(f"== the guard of {name}\n")
        for suite, cases in suites.items():
            _leak_table(suite, cases, results[name][suite])
        _honest_table([c for cases in suites.values() for c in cases],
                      [r for suite in suites for r in results[name][suite]])
        _summary(name, suites, results[name])
    print(f"judged {sum(len(c) for c in suites.values())} replies with {len(guards)} guard(s) in {wall:.0f} s")


def _judge(module, catalog, runner, case):
    puzzle = catalog.get(case.puzzle)
    guard = module.LeakGuard(puzzle.reference, puzzle.starter, case.learner, SimChecker(case.puzzle, runner=runner))
    started = time.perf_counter()
    leak = guard.judge(case.text)
    seconds = time.perf_counter() - started
    outcome = "shown" if leak is None else ("ran" if guard.checks_run else "read")
    return outcome, seconds, guard.checks_run


def _leak_table(suite, cases, results) -> None:
    """Give-aways by form, a column of read / ran / LEAKED for each learner file."""
    states = [s for s in STATES if any(c.state == s for c in cases if c.leak)]
    if not states:
        return
    counts = defaultdict(lambda: defaultdict(int))
    for case, (outcome, _, _) in zip(cases, results):
        if case.leak:
            counts[(case.form, case.state)][outcome] += 1
            counts[(case.form, case.state)]["cases"] += 1
            counts[("all give-aways", case.state)][outcome] += 1
            counts[("all give-aways", case.state)]["cases"] += 1
    forms = list(dict.fromkeys(c.form for c in cases if c.leak)) + ["all give-aways"]
    width = max(len(f) for f in forms) + 2
    title = f"{suite} suite, give-aways"
    print(f"{title:<{width}}" + "".join(f"{s:>32}" for s in states))
    print(f"{'':<{width}}" + "".join(f"{'cases  read / ran / LEAKED':>32}" for _ in states))
    for form in forms:
        if form == "all give-aways":
            print()
        cells = ""
        for s in states:
            by = counts[(form, s)]
            cells += f"{by['cases']:>14} {by['read']:>5} / {by['ran']:>3} / {by['shown']:>6}" if by["cases"] \
                else f"{'-':>32}"
        print(f"{form:<{width}}{cells}")
    print()


def _honest_table(cases, results) -> None:
    counts = defaultdict(lambda: defaultdict(int))
    for case, (outcome, _, _) in zip(cases, results):
        if not case.leak:
            counts[case.form]["cases"] += 1
            counts[case.form]["withheld"] += outcome != "shown"
    width = max(len(f) for f in counts) + 2
    print(f"{'honest hint':<{width}}{'cases':>6}{'FALSE WITHHOLDS':>17}")
    for form, by in counts.items():
        print(f"{form:<{width}}{by['cases']:>6}{by['withheld']:>17}")
    print(f"\n{'all honest hints':<{width}}{sum(b['cases'] for b in counts.values()):>6}"
          f"{sum(b['withheld'] for b in counts.values()):>17}\n")


def _summary(name, suites, results) -> None:
    cases = [c for suite in suites.values() for c in suite]
    flat = [r for suite in suites for r in results[suite]]
    leaked = sum(1 for c, r in zip(cases, flat) if c.leak and r[0] == "shown")
    withheld = sum(1 for c, r in zip(cases, flat) if not c.leak and r[0] != "shown")
    times = sorted(r[1] for r in flat)
    runs = [r[2] for r in flat]
    ran = [r[1] for r in flat if r[2]]
    print(f"{name}: {leaked} of {sum(c.leak for c in cases)} give-aways leaked, {withheld} of "
          f"{sum(not c.leak for c in cases)} honest hints withheld")
    print(f"{name}: one judgement takes {statistics.median(times) * 1000:.0f} ms (median), "
          f"{times[int(len(times) * 0.9)]:.2f} s (90th percentile), {times[-1]:.2f} s at most; "
          f"{sum(1 for n in runs if n)} of {len(runs)} ran code in the checker's child, "
          f"{max(runs)} modules at most"
          + (f", {statistics.median(ran):.2f} s (median) when they did" if ran else ""))
    slowest = sorted(zip(flat, cases), key=lambda pair: -pair[0][1])[:3]
    print(f"{name}: slowest: " + "; ".join(f"{c.puzzle}, {c.form} ({c.state}): {r[1]:.2f} s, {r[2]} modules"
                                         for r, c in slowest) + "\n")


def _guard_at(revision: str):
    """The leak guard as it was at a revision, loaded beside today's (its relative imports still
    resolve inside tutor.ai)."""
    source = subprocess.run(["git", "show", f"{revision}:tutor/ai/leakguard.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "leakguard_then.py"
    path.write_text(source)
    name = f"tutor.ai._leakguard_at_{abs(hash(revision))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    main()
