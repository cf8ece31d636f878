"""`gpu-tutor content check`: every puzzle folder validated the way a learner will meet it.

A defect anywhere makes the command exit 1 and says which puzzle, which file and what is wrong:
the manifest and folders parse; the reference passes every config (fixed and random, on the chosen
backend, with the puzzle's [require] and [perf] tables judged too); the starter does not pass (a
performance puzzle's starter is right and fails on its counters alone); the starter and
the reference declare the puzzle's constants; no hint repeats a line of the reference; no
requirement contradicts a budget; every lesson parses as Markdown.
"""

from __future__ import annotations

import ast
import re
import sys
import time

from .engine.runner import Runner
from tutor.puzzles import ContentError, Puzzle, load_catalog
from tutor.sourcelines import code_lines, norm

N_RANDOM = 6


def run_content_check(backend: str = "sim", only: list[str] | None = None, seed: int | None = None,
                      out=None) -> int:
    out = out or sys.stdout
    try:
        catalog = load_catalog()
    except ContentError as e:
        print(f"content: {e}", file=out)
        return 1
    puzzles = catalog.ordered()
    if only:
        unknown = [p for p in only if p not in catalog.puzzles]
        if unknown:
            print(f"content: unknown puzzle(s): {', '.join(unknown)}", file=out)
            return 2
        puzzles = [catalog.puzzles[p] for p in only]
    defects_total = 0
    started = time.perf_counter()
    with Runner(backend, timeout=30.0) as runner:
        for puzzle in puzzles:
            t0 = time.perf_counter()
            defects = static_defects(puzzle)
            ref = runner.check(puzzle.id, puzzle.reference, f"{puzzle.id}/reference.py", seed=seed,
                               n_random=N_RANDOM, keep_traces=False)
            if not ref.verdict.passed:
                first = ref.verdict.failures[0].message if ref.verdict.failures else "no configs ran"
                defects.append(f"reference.py does not pass on {backend}: {first}")
            starter = runner.check(puzzle.id, puzzle.starter, f"{puzzle.id}/starter.py", seed=seed,
                                   n_random=N_RANDOM, keep_traces=False)
            if starter.verdict.passed:
                defects.append("starter.py passes already: it must leave the work to the learner")
            elif puzzle.perf:
                other = [f for f in starter.verdict.failures if f.kind != "perf_target"]
                if other:
                    defects.append(f"starter.py must be right and only slow (a performance puzzle's starter "
                                   f"fails on a counter, not on output), but it fails with {other[0].kind}: "
                                   f"{other[0].message}")
            n = len(ref.verdict.configs)
            status = "ok" if not defects else "DEFECT"
            print(f"{status:6} {puzzle.track:9} {puzzle.id:20} reference {n} configs passed"
                  f"{' ' if ref.verdict.passed else ' NOT '}on {backend}, starter fails"
                  f"{'' if not starter.verdict.passed else ' NOT'}  ({time.perf_counter() - t0:.2f} s)", file=out)
            for d in defects:
                print(f"       - {puzzle.id}: {d}", file=out)
            defects_total += len(defects)
    print(f"{len(puzzles)} puzzles, {defects_total} defect(s), {time.perf_counter() - started:.1f} s", file=out)
    return 1 if defects_total else 0


def static_defects(puzzle: Puzzle) -> list[str]:
    defects = []
    reference, starter = puzzle.reference, puzzle.starter
    defects += [f"hint {n}: repeats the reference's line `{line}`" for n, line in hint_leaks(puzzle)]
    for name, text in (("starter.py", starter), ("reference.py", reference)):
        try:
            consts = module_constants(text)
        except SyntaxError as e:
            defects.append(f"{name}: does not parse (line {e.lineno}: {e.msg})")
            continue
        for k, v in puzzle.constants.items():
            if consts.get(k) != v:
                defects.append(f"{name}: constant {k} should be {v}, found {consts.get(k)!r}")
    if not puzzle.perf and not re.search(r"#\s*FILL ME IN", starter):  # a perf starter is whole, and slow
        defects.append("starter.py: no `# FILL ME IN (about N lines)` marker")
    defects += [f"lesson.md: {p}" for p in markdown_problems(puzzle.lesson)]
    defects += [f"learned.md: {p}" for p in markdown_problems(puzzle.learned, need_title=False)]
    if len(puzzle.hints) < 3:
        defects.append("puzzle.toml: fewer than 3 hint levels")
    defects += requirement_conflicts(puzzle)
    return defects


def requirement_conflicts(puzzle: Puzzle) -> list[str]:
    """[require] against [budget]: a requirement the budget makes impossible."""
    if not puzzle.require.get("shared") or "shared_size" not in puzzle.budget:
        return []
    for config in puzzle.configs:
        if puzzle.budget_for(config)["shared_size"] < 1:
            return [f"puzzle.toml: [require] shared asks for shared memory, but [budget] shared_size is 0 "
                    f"in config '{config.name}'"]
    return []


def hint_leaks(puzzle: Puzzle) -> list[tuple[int, str]]:
    """Reference lines (not already in the starter) that a hint repeats as a whole line."""
    ref = code_lines(puzzle.reference) - code_lines(puzzle.starter)
    leaks = []
    for n, hint in enumerate(puzzle.hints, 1):
        for raw in hint.splitlines():
            text = norm(raw.strip().strip("`").removeprefix(">").strip())
            if text in ref:
                leaks.append((n, text))
    return leaks


def module_constants(source: str) -> dict:
    tree = ast.parse(source)
    consts = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Constant):
                consts[node.targets[0].id] = node.value.value
    return consts


def markdown_problems(text: str, need_title: bool = True) -> list[str]:
    problems = []
    if not text.strip():
        return ["is empty"]
    if need_title and not text.lstrip().startswith("#"):
        problems.append("does not start with a title line (`# ...`)")
    fences = [line.strip() for line in text.splitlines() if line.lstrip().startswith("```")]
    if len(fences) % 2:
        problems.append("has an unclosed ``` code block")
    if any(f == "```" for f in fences[0::2]):
        # Without a language the app's Markdown guesses one, loading every lexer pygments has
        problems.append("has a ``` code block without a language (write ```text for a picture)")
    try:
        from markdown_it import MarkdownIt  # what Textual's Markdown widget renders with
    except ImportError:
        return problems
    try:
        MarkdownIt("commonmark").enable("table").parse(text)
    except Exception as e:  # pragma: no cover - markdown-it accepts nearly everything
        problems.append(f"does not render: {e}")
    return problems
