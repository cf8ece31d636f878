"""The leak guard on real puzzles, its checks run by the real checker in the engine's child."""

import pytest

from tutor.ai.hints import SimChecker
from tutor.ai.leakguard import LeakGuard, extract_code, repeated_reference_lines, splices
from tutor.coach.screen import screen_puzzle_module

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


def test_extract_code_finds_fenced_blocks_and_statement_like_inline_spans():
    text = "Look at `a`. Try `out[i] = a[i] * 2`.\n```python\nx = 1\n```\nAnd `cuda.threadIdx.x`."
    assert extract_code(text) == ["x = 1", "out[i] = a[i] * 2"]


def test_a_statement_that_solves_the_puzzle_in_the_learners_body_is_withheld(map_guard_parts):
    # not the reference's line (different names), but it passes once pasted in
    leak = guard(map_guard_parts).judge("Try this:\n```python\nj = cuda.threadIdx.x\nout[j] = 10 + a[j]\n```")
    assert leak is not None and "solves the puzzle" in leak.reason


def test_a_whole_kernel_without_imports_is_tried_as_a_module_and_withheld(map_guard_parts):
    text = "```\n@cuda.jit\ndef kernel(out, a):\n    t = cuda.threadIdx.x\n    out[t] = a[t] + 10.0\n```"
    assert guard(map_guard_parts).judge(text) is not None


def test_an_inline_span_that_solves_it_is_withheld(map_guard_parts):
    assert guard(map_guard_parts).judge("Just write `out[i] = 10 + a[i]` instead of your last line.") is not None


def test_a_repeated_reference_line_is_withheld_without_running_anything(map_guard_parts):
    g = guard(map_guard_parts)
    leak = g.judge("The line you need is `out[local_i] = a[local_i] + 10`")
    assert leak is not None and "repeats the solution" in leak.reason
    assert g.checks_run == 0


def test_a_teaching_hint_with_harmless_code_passes_the_guard(map_guard_parts):
    g = guard(map_guard_parts)
    text = ("Your line 7 copies `a[i]` unchanged. What must happen to each value before it is stored?\n"
            "```python\nx = a[i]\n```")
    assert g.judge(text) is None
    assert g.checks_run >= 1  # the code was really tried


def test_lines_the_learner_already_wrote_are_not_leaks(catalog):
    puzzle = catalog.get("map")
    learner = STARTER_EDIT.replace("out[i] = a[i]", "local_i = cuda.threadIdx.x\n    out[local_i] = a[local_i] + 10")
    assert repeated_reference_lines("out[local_i] = a[local_i] + 10", puzzle.reference, puzzle.starter, learner) == []


def test_splices_put_statements_in_place_of_the_body_and_after_it():
    modules = splices("out[i] = 1", STARTER_EDIT)
    assert any("    out[i] = 1\n" in m and "out[i] = a[i]" not in m for m in modules)
    assert any("    out[i] = a[i]\n    out[i] = 1" in m for m in modules)


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
    leak = g.judge("Try this:\n```python\nj = cuda.threadIdx.x\nout[j] = 10 + a[j]\n```")
    assert leak is not None  # the guard still catches a real give-away
    assert ran and all(screen_puzzle_module(m) == [] for m in ran)


def test_splices_of_a_learner_file_the_grammar_refuses_are_not_run(map_guard_parts):
    # the learner's own stray module-level print makes every splice fail the grammar: none is run,
    # so none counts as passing (the repeated-reference-line check still applies to the text)
    puzzle, passes = map_guard_parts
    learner = STARTER_EDIT + "\nprint('debug')\n"
    ran = []
    g = LeakGuard(puzzle.reference, puzzle.starter, learner, lambda m: ran.append(m) or passes(m))
    assert g.judge("Try this:\n```python\nj = cuda.threadIdx.x\nout[j] = 10 + a[j]\n```") is None
    assert ran == [] and g.screened_out >= 1
    assert g.judge("The line you need is `out[local_i] = a[local_i] + 10`") is not None
