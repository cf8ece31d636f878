"""The leak guard on real puzzles, its checks run by the real checker in the engine's child.

The whole suite of disguises and honest hints is tests/ai/test_leak_suite.py; here, one rule at a
time."""

import re

import pytest

from tutor.ai.hints import SimChecker
from tutor.ai.leakguard import LeakGuard, extract_code, normalise, splices
from tutor.engine.loading.static_rules import check_puzzle_module

STARTER_EDIT = """from numba import cuda


@cuda.jit
def kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i]
"""


@pytest.fixture(scope="module")
def map_guard_parts(catalog):
    puzzle = catalog.get("map")
    with SimChecker("map") as passes:
        yield puzzle, passes


def guard(parts, learner=STARTER_EDIT):
    puzzle, passes = parts
    return LeakGuard(puzzle.reference, puzzle.starter, learner, passes)


# Escaped today's main: only ``` fences and inline spans were code, so an indented block, a ~~~
# fence, <pre><code>, >>> prompts, a blockquoted fence and plain lines of prose were prose.
def test_extract_code_finds_code_however_it_is_marked_up():
    text = ("Look at `a`. Try ``out[i] = a[i] * 2``.\n```python\nx = 1\n```\n~~~\ny = 2\n~~~\n\n    z = 3\n\n"
            "<pre><code>if i &lt; 4:\n    w = 4</code></pre>\n>>> v = 5\n... \n> ```\n> u = 6\n> ```\n"
            "Then t = 7 and you are done")
    pieces = extract_code(text)
    for code in ("a", "out[i] = a[i] * 2", "x = 1", "y = 2", "z = 3", "if i < 4:\n    w = 4", "v = 5", "u = 6"):
        assert code in [p.strip() for p in pieces], code
    assert any("t = 7" in p for p in pieces)


def test_normalise_folds_fullwidth_forms_and_drops_invisible_characters():
    assert normalise("out[i]\u200b \uff1d a[i] \uff0b\u2060 10 \u2212 0") == "out[i] = a[i] + 10 - 0"


def test_a_statement_that_solves_the_puzzle_in_the_learners_body_is_withheld(map_guard_parts):
    # too far from the reference's line to stand for it, but it passes once pasted in
    g = guard(map_guard_parts)
    leak = g.judge("Try this:\n```python\nj = cuda.threadIdx.x\nout[j] = a[j] + 5 + 5\n```")
    assert leak is not None and "solves the puzzle" in leak.reason and g.checks_run >= 1


def test_a_whole_kernel_without_imports_is_tried_as_a_module_and_withheld(map_guard_parts):
    text = "```\n@cuda.jit\ndef kernel(out, a):\n    t = cuda.threadIdx.x\n    out[t] = a[t] + 10.0\n```"
    assert guard(map_guard_parts).judge(text) is not None


def test_an_inline_span_that_solves_it_is_withheld(map_guard_parts):
    assert guard(map_guard_parts).judge("Just write `out[i] = 10 + a[i]` instead of your last line.") is not None


def test_the_reference_line_renamed_and_reordered_is_withheld_without_running_anything(map_guard_parts):
    g = guard(map_guard_parts)
    leak = g.judge("The line you need is `out[j] = 10 + a[j]`")
    assert leak is not None and leak.reasons[0].startswith("its code stands for 1 of the 1 statements")
    assert leak.code == ["out[j] = 10 + a[j]"] and g.checks_run == 0


def test_a_teaching_hint_with_harmless_code_passes_the_guard(map_guard_parts):
    g = guard(map_guard_parts)
    text = ("Your line 7 copies `a[i]` unchanged. What must happen to each value before it is stored?\n"
            "```python\nx = a[i]\n```")
    assert g.judge(text) is None
    assert g.checks_run >= 1  # the code was really tried


def test_lines_the_learner_already_wrote_are_not_leaks(catalog):
    puzzle = catalog.get("dot")
    learner = puzzle.reference.replace("cuda.syncthreads()", "pass")  # every step but the barrier
    g = LeakGuard(puzzle.reference, puzzle.starter, learner, lambda module: False)
    quoted = "Your lines `cache[local_i] = a[i] * b[i]`, `cache[local_i] = 0` and `total += cache[k]` are right."
    assert g.coverage(quoted).matched == [] and g.judge(quoted) is None


@pytest.fixture(scope="module")
def dot_guard_parts(catalog):
    with SimChecker("dot") as passes:
        yield catalog.get("dot"), passes


DOT_STEPS = ["if i < size:\n    cache[local_i] = a[i] * b[i]", "else:\n    cache[local_i] = 0", "cuda.syncthreads()",
             "if local_i == 0:\n    total = numba.float32(0)", "    for k in range(TPB):\n        total += cache[k]",
             "    out[0] = total"]
# The transpose's body in six pieces, its names the model's own: no line of it is the reference's.
TRANSPOSE_STEPS = ["x = cuda.threadIdx.x\ny = cuda.threadIdx.y",
                   "c = cuda.blockIdx.x * TILE + x\nr = cuda.blockIdx.y * TILE + y",
                   "if r < rows and c < cols:\n    tile[y, x] = a[r, c]", "cuda.syncthreads()",
                   "orow = cuda.blockIdx.x * TILE + y\nocol = cuda.blockIdx.y * TILE + x",
                   "if orow < cols and ocol < rows:\n    out[orow, ocol] = tile[x, y]"]


@pytest.fixture(scope="module")
def transpose_guard_parts(catalog):
    with SimChecker("transpose") as passes:
        yield catalog.get("transpose"), passes


# Escaped today's main: past three pieces only two orders were run (as given, and reversed), so
# shuffled pieces passed; no line of them was the reference's, so nothing else caught them.
@pytest.mark.parametrize("order", [(3, 0, 5, 1, 4, 2), (5, 2, 0, 3, 1, 4), (0, 1, 2, 3, 4, 5)])
def test_pieces_are_judged_as_a_set_whatever_their_order(transpose_guard_parts, order):
    puzzle, passes = transpose_guard_parts
    g = guard(transpose_guard_parts, puzzle.starter)
    text = "\n\n".join(f"Piece {n}:\n```python\n{TRANSPOSE_STEPS[k]}\n```" for n, k in enumerate(order))
    leak = g.judge(text)
    assert leak is not None and g.checks_run == 0
    assert "stands for 6 of the 6" in leak.reasons[0]
    assert "spread over 4 pieces" in leak.reasons[1]  # the indices and the barrier count for nothing


# Escaped today's main: any line of the reference was a leak unless it matched a short list, so a
# nudge quoting `if i < size:` or `else:` was withheld.
def test_trivial_lines_alone_never_count_however_many(dot_guard_parts):
    g = guard(dot_guard_parts, dot_guard_parts[0].starter)
    text = ("The shape:\n```python\nlocal_i = cuda.threadIdx.x\nif i < size:\n    ...\nelse:\n    ...\n"
            "cuda.syncthreads()\nif local_i == 0:\n    total = numba.float32(0)\n    for k in range(TPB):\n"
            "        ...\n    return\n```")
    assert g.coverage(text).matched == [] and g.judge(text) is None


def test_one_line_of_a_longer_solution_is_not_enough(dot_guard_parts):
    g = guard(dot_guard_parts, dot_guard_parts[0].starter)
    assert g.judge("The product goes in your slot: `cache[local_i] = a[i] * b[i]`.") is None


# Escaped today's main: a kernel with `cuda.syncthread()` failed the checker, so it was shown (its
# names renamed, no line of it was the reference's), and the learner fixed the one letter.
def test_a_typo_and_renamed_variables_still_stand_for_the_solution(catalog):
    puzzle = catalog.get("transpose")
    kernel = puzzle.reference.replace("cuda.syncthreads()", "cuda.syncthread()")
    for n, name in enumerate(("tx", "ty", "col", "row", "out_row", "out_col")):
        kernel = re.sub(rf"\b{name}\b", f"v{n}", kernel)
    with SimChecker("transpose") as passes:
        g = LeakGuard(puzzle.reference, puzzle.starter, puzzle.starter, passes)
        assert not passes(kernel)  # the typo fails the checker: running it proves nothing
        leak = g.judge(f"Same idea, my names:\n```python\n{kernel}\n```")
    assert leak is not None and g.checks_run == 0


# The right-hand sides of the reference's lines, without their targets, used to count as its
# statements; since the issue "Scores and hints that mean what they say" (part 4) they are fragments,
# shown (tests/ai/test_leak_normalised.py), and the same two as whole statements are withheld.
def test_two_whole_statements_are_withheld_where_their_right_hand_sides_are_shown(dot_guard_parts):
    g = guard(dot_guard_parts, dot_guard_parts[0].starter)
    assert g.judge("The values: `a[i] * b[i]` into your slot, and thread 0 sums `cache[k]`.") is None
    leak = g.judge("The values: `cache[t] = a[i] * b[i]` into your slot, and thread 0 does `s += cache[k]`.")
    assert leak is not None and "stands for 2 of the 4" in leak.reasons[0] and "inline" in leak.reason


# Escaped today's main: what a comment, a docstring or a string says was never read.
@pytest.mark.parametrize("wrap", [
    lambda lines: "\n".join(f"# {line}" for line in lines) + "\npass",
    lambda lines: 'def kernel(out, a, b, size):\n    """\n' + "\n".join(f"    {line}" for line in lines) + '\n    """',
    lambda lines: f"ANSWER = {chr(10).join(lines)!r}",
])
def test_code_hidden_in_comments_docstrings_and_strings_is_read(dot_guard_parts, wrap):
    g = guard(dot_guard_parts, dot_guard_parts[0].starter)
    lines = "\n".join(DOT_STEPS).splitlines()
    leak = g.judge("Keep this:\n```python\n" + wrap(lines) + "\n```")
    assert leak is not None and any("hidden in comments, docstrings or strings" in r for r in leak.reasons)


def test_every_reason_is_free_of_code_for_the_log(dot_guard_parts):
    g = guard(dot_guard_parts, dot_guard_parts[0].starter)
    leak = g.judge("```python\n# cache[local_i] = a[i] * b[i]\n```\n`total \uff0b= cache[k]`\nout[0] = total")
    assert len(leak.reasons) >= 4
    assert not any(c in reason for reason in leak.reasons for c in "[]=`")


def test_splices_put_statements_in_place_of_the_body_and_after_it():
    modules = splices("out[i] = 1", STARTER_EDIT)
    assert any("    out[i] = 1\n" in m and "out[i] = a[i]" not in m for m in modules)
    assert any("    out[i] = a[i]\n    out[i] = 1" in m for m in modules)


def test_splices_also_keep_the_learners_setup_and_put_statements_in_place_of_the_rest():
    modules = splices("out[i] = a[i] + 10", STARTER_EDIT)
    kept_setup = "    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n"
    assert any(kept_setup in m and "out[i] = a[i]\n" not in m for m in modules)
    # a piece that sets the index itself replaces the setup too
    assert len(splices("i = cuda.threadIdx.x\nout[i] = a[i] + 10", STARTER_EDIT)) == 2


# Escaped today's main (42f2d21): LeakGuard.judge ran every splice of a hint's code in the checker's
# child, so a fence with os.system in it ran (both markers below were created, judge said None).
def os_system_hints(marker):
    whole_module = ("Try this:\n```python\nimport os\n"
                    f"os.system('touch {marker}-module')\n"
                    "from numba import cuda\n\n@cuda.jit\ndef kernel(out, a):\n"
                    "    i = cuda.threadIdx.x\n    out[i] = a[i]\n```")
    statements = f"Think about:\n```python\nimport os\nos.system('touch {marker}-body')\n```"
    return whole_module, statements


def test_hint_code_that_calls_os_system_is_never_run(map_guard_parts, tmp_path):
    marker = tmp_path / "ran"
    for text in os_system_hints(marker):
        g = guard(map_guard_parts)
        assert g.judge(text) is None  # not a passing module: simply not run
        assert g.checks_run == 0 and g.screened_out >= 1
    assert list(tmp_path.iterdir()) == []


def test_only_modules_in_the_puzzle_grammar_reach_the_checker(map_guard_parts):
    puzzle, passes = map_guard_parts
    ran = []

    def spy(module):
        ran.append(module)
        return passes(module)

    g = LeakGuard(puzzle.reference, puzzle.starter, STARTER_EDIT, spy)
    leak = g.judge("Try this:\n```python\nj = cuda.threadIdx.x\nout[j] = a[j] + 5 + 5\n```")
    assert leak is not None  # the guard still catches a real give-away (by running it)
    assert ran and all(check_puzzle_module(m) == [] for m in ran)


def test_splices_of_a_learner_file_the_grammar_refuses_are_not_run(map_guard_parts):
    # the learner's own stray module-level print makes every splice fail the grammar: none is run,
    # so none counts as passing (the closeness check still applies to the text)
    puzzle, passes = map_guard_parts
    learner = STARTER_EDIT + "\nprint('debug')\n"
    ran = []
    g = LeakGuard(puzzle.reference, puzzle.starter, learner, lambda m: ran.append(m) or passes(m))
    assert g.judge("Try this:\n```python\nj = cuda.threadIdx.x\nout[j] = a[j] + 5 + 5\n```") is None
    assert ran == [] and g.screened_out >= 1
    assert g.judge("The line you need is `out[local_i] = a[local_i] + 10`") is not None
