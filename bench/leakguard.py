"""How well does the AI hints' leak guard tell a give-away from an honest hint? The suite of
tests/ai/leak_suite.py, judged by the real guard with the real checker in the engine's child.

    .venv/bin/python bench/leakguard.py                  # the guard in this tree (~10 s on 2 cores)
    .venv/bin/python bench/leakguard.py --against HEAD   # and, beside it, the guard of a git revision

The suite: every form of give-away a model has used (fenced, indented, `~~~`, `<pre><code>`, `>>>`
prompts, pieces shuffled or with a name renamed, a typo, a typo with every name the model's own,
comments, a docstring, a string, a fullwidth plus, zero-width spaces, right-hand sides only, plain
lines of prose, inline spans, a blockquote), each generated from the reference of seven puzzles
with shared memory and barriers, and more honest hints than that (nudges that quote a guard, an
`else:`, a loop header, a barrier, one line, the starter or the learner's own code; and every
authored hint of every puzzle). Each give-away is judged with the starter as the learner's file.
Reported per form: how many were withheld by reading alone ("read": no code run), how many only
once their code ran ("ran"), how many leaked; per honest form, the false withholds; the totals; and
the median time of one judgement. The goal: 0 leaks and 0 false withholds.
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

from leak_suite import honest_cases, leak_cases  # noqa: E402

from tutor.ai import leakguard  # noqa: E402
from tutor.ai.hints import SimChecker  # noqa: E402
from tutor.engine.runner import Runner  # noqa: E402
from tutor.puzzles import load_catalog  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", default=None, help="a git revision whose tutor/ai/leakguard.py to judge too")
    args = parser.parse_args()
    catalog = load_catalog()
    guards = {"now": leakguard}
    if args.against:
        guards[args.against] = _guard_at(args.against)
    cases = leak_cases(catalog) + honest_cases(catalog)
    with Runner("sim") as runner:
        results = {name: [_judge(module, catalog, runner, case) for case in cases] for name, module in guards.items()}
    _table(cases, results)


def _judge(module, catalog, runner, case):
    puzzle = catalog.get(case.puzzle)
    guard = module.LeakGuard(puzzle.reference, puzzle.starter, case.learner, SimChecker(case.puzzle, runner=runner))
    started = time.perf_counter()
    leak = guard.judge(case.text)
    seconds = time.perf_counter() - started
    if leak is None:
        return "shown", seconds
    return ("ran" if guard.checks_run else "close"), seconds


def _table(cases, results) -> None:
    names = list(results)
    rows = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    for n, case in enumerate(cases):
        for name in names:
            rows[(case.leak, case.form)][name][results[name][n][0]] += 1
            rows[(case.leak, case.form)][name]["cases"] += 1
    width = max(len(form) for _, form in rows) + 2
    head = "".join(f"{name + ': read / ran / LEAKED':>34}" for name in names)
    print(f"{'give-away':<{width}}{'cases':>6}{head}")
    totals = defaultdict(lambda: defaultdict(int))
    for (is_leak, form), by in rows.items():
        if not is_leak:
            continue
        cells = "".join(f"{by[name]['close']:>25} / {by[name]['ran']:>3} / {by[name]['shown']:>6}" for name in names)
        print(f"{form:<{width}}{by[names[0]]['cases']:>6}{cells}")
        for name in names:
            for key in ("close", "ran", "shown", "cases"):
                totals[name][key] += by[name][key]
    cells = "".join(f"{totals[name]['close']:>25} / {totals[name]['ran']:>3} / {totals[name]['shown']:>6}"
                    for name in names)
    print(f"{'all give-aways':<{width}}{totals[names[0]]['cases']:>6}{cells}\n")
    head = "".join(f"{name + ': FALSE WITHHOLDS':>34}" for name in names)
    print(f"{'honest hint':<{width}}{'cases':>6}{head}")
    honest = defaultdict(int)
    for (is_leak, form), by in rows.items():
        if is_leak:
            continue
        cells = "".join(f"{by[name]['close'] + by[name]['ran']:>34}" for name in names)
        print(f"{form:<{width}}{by[names[0]]['cases']:>6}{cells}")
        for name in names:
            honest[name] += by[name]["close"] + by[name]["ran"]
        honest["cases"] += by[names[0]]["cases"]
    print(f"{'all honest hints':<{width}}{honest['cases']:>6}" + "".join(f"{honest[name]:>34}" for name in names))
    print()
    for name in names:
        times = [seconds for _, seconds in results[name]]
        print(f"{name}: {totals[name]['shown']} of {totals[name]['cases']} give-aways leaked, "
              f"{honest[name]} of {honest['cases']} honest hints withheld; one judgement takes "
              f"{statistics.median(times) * 1000:.0f} ms (median), {max(times):.2f} s at most")


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
