"""`gpu-tutor content check`: its pieces on their own, and the command on shipped and broken content.

Broken content is a copy of content/ under tmp_path with one file changed, found through the
GPU_TUTOR_CONTENT environment variable. The variable is set before run_content_check starts its
Runner, so the child process that checks the reference and the starter sees the same copy.
"""

import dataclasses
import io
import shutil

import pytest

from tutor.content_check import (code_lines, hint_leaks, markdown_problems, module_constants,
                                 run_content_check, static_defects)
from tutor.puzzles import CONTENT_ENV, ContentError, content_dir, load_catalog

CONTENT = content_dir()


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(CONTENT)


@pytest.fixture
def content_copy(tmp_path, monkeypatch):
    root = tmp_path / "content"
    shutil.copytree(CONTENT, root)
    monkeypatch.setenv(CONTENT_ENV, str(root))
    return root


def edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path} no longer contains {old!r}: update this test"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def leaked_line(puzzle):
    """A line of the reference's code that the starter does not have (one TOML can hold as is)."""
    lines = code_lines(puzzle.reference) - code_lines(puzzle.starter)
    lines = [line for line in lines if '"' not in line and "\\" not in line and "'" not in line]
    return max(sorted(lines), key=len)


def check(only, seed=1):
    out = io.StringIO()
    code = run_content_check("sim", only, seed=seed, out=out)
    return code, out.getvalue()


# -- hint_leaks -----------------------------------------------------------------------------------
def test_shipped_hints_do_not_leak_the_reference(catalog):
    assert {pid: hint_leaks(p) for pid, p in catalog.puzzles.items() if hint_leaks(p)} == {}


def test_a_hint_that_repeats_a_reference_line_leaks(catalog):
    puzzle = catalog.get("map")
    hints = list(puzzle.hints) + ["Type this:\n    out[local_i]   =  a[local_i] + 10\nand run it."]
    leaks = hint_leaks(dataclasses.replace(puzzle, hints=hints))
    assert leaks == [(len(hints), "out[local_i] = a[local_i] + 10")]


def test_a_backquoted_or_quoted_line_leaks_too(catalog):
    puzzle = catalog.get("blocks")
    line = leaked_line(puzzle)
    leaks = hint_leaks(dataclasses.replace(puzzle, hints=[f"`{line}`", f"> {line}"]))
    assert leaks == [(1, line), (2, line)]


def test_code_inside_a_sentence_or_a_starter_line_is_no_leak(catalog):
    puzzle = catalog.get("shared")
    assert "i = cuda.grid(1)" in code_lines(puzzle.starter)
    hints = ["i = cuda.grid(1)",  # already in the starter: nothing handed over
             "Write out[i] = shared[local_i] + 10 once the barrier has passed."]
    assert hint_leaks(dataclasses.replace(puzzle, hints=hints)) == []


# -- module_constants -----------------------------------------------------------------------------
def test_module_constants_reads_top_level_literal_assignments():
    source = ("import numba\nTPB = 8\nMAX_CONV = 4\nNAME = 'x'\nA, B = 1, 2\nSIZE = TPB * 2\n"
              "def f():\n    INNER = 3\n")
    assert module_constants(source) == {"TPB": 8, "MAX_CONV": 4, "NAME": "x"}


def test_module_constants_of_every_shipped_file_match_the_puzzle(catalog):
    for pid, puzzle in catalog.puzzles.items():
        for text in (puzzle.starter, puzzle.reference):
            consts = module_constants(text)
            assert {k: consts.get(k) for k in puzzle.constants} == puzzle.constants, pid


def test_module_constants_raises_on_a_syntax_error():
    with pytest.raises(SyntaxError):
        module_constants("TPB = = 8\n")


# -- markdown_problems ----------------------------------------------------------------------------
def test_markdown_problems_accepts_a_plain_lesson():
    assert markdown_problems("# Title\n\nSome text.\n\n```python\nx = 1\n```\n") == []


def test_markdown_problems_finds_each_problem():
    assert markdown_problems("") == ["is empty"]
    assert markdown_problems("   \n") == ["is empty"]
    assert any("title" in p for p in markdown_problems("No title here.\n"))
    assert markdown_problems("No title here.\n", need_title=False) == []
    unclosed = markdown_problems("# Title\n\n```python\nx = 1\n")
    assert len(unclosed) == 1 and "unclosed" in unclosed[0]


def test_shipped_lessons_and_learned_notes_are_clean(catalog):
    for pid, puzzle in catalog.puzzles.items():
        assert markdown_problems(puzzle.lesson) == [], pid
        assert markdown_problems(puzzle.learned, need_title=False) == [], pid


# -- static_defects -------------------------------------------------------------------------------
def test_shipped_content_has_no_static_defects(catalog):
    assert {pid: static_defects(p) for pid, p in catalog.puzzles.items() if static_defects(p)} == {}


def test_static_defects_name_each_broken_file(tmp_path):
    root = tmp_path / "content"
    shutil.copytree(CONTENT, root)
    line = leaked_line(load_catalog(root).get("map"))
    edit(root / "map" / "puzzle.toml", "hints = [\n", f'hints = [\n  """Just type this:\n    {line}\n""",\n')
    edit(root / "pooling" / "reference.py", "TPB = 8", "TPB = 16")
    edit(root / "dot" / "starter.py", "# FILL ME IN", "# your code")
    (root / "zip" / "lesson.md").write_text("# Zip\n\n```python\nout[0] = 1\n", encoding="utf-8")
    (root / "guard" / "starter.py").write_text("def kernel(out, a, size)\n    pass\n", encoding="utf-8")
    catalog = load_catalog(root)

    assert static_defects(catalog.get("map")) == [f"hint 1: repeats the reference's line `{line}`"]
    assert static_defects(catalog.get("pooling")) == ["reference.py: constant TPB should be 8, found 16"]
    assert static_defects(catalog.get("dot")) == ["starter.py: no `# FILL ME IN (about N lines)` marker"]
    assert static_defects(catalog.get("zip")) == ["lesson.md: has an unclosed ``` code block"]
    guard = static_defects(catalog.get("guard"))
    assert any(d.startswith("starter.py: does not parse (line 1") for d in guard), guard


# -- run_content_check ----------------------------------------------------------------------------
def test_content_check_passes_on_shipped_puzzles(monkeypatch):
    monkeypatch.setenv(CONTENT_ENV, str(CONTENT))
    code, text = check(["map", "dot"])
    assert code == 0, text
    lines = text.splitlines()
    assert lines[0].startswith("ok") and " map " in lines[0]
    assert lines[1].startswith("ok") and " dot " in lines[1]
    assert lines[-1].startswith("2 puzzles, 0 defect(s)")


def test_content_check_rejects_an_unknown_puzzle():
    code, text = check(["map", "no_such_puzzle"])
    assert code == 2 and "no_such_puzzle" in text


def _leak(root):
    line = leaked_line(load_catalog(root).get("map"))
    edit(root / "map" / "puzzle.toml", "hints = [\n", f'hints = [\n  """Type this:\n`{line}`\nand run it.""",\n')
    return "map", [f"map: hint 1: repeats the reference's line `{line}`"]


def _starter_is_the_reference(root):
    shutil.copy(root / "zip" / "reference.py", root / "zip" / "starter.py")
    return "zip", ["zip: starter.py passes already", "zip: starter.py: no `# FILL ME IN"]


def _reference_bug(root):
    edit(root / "guard" / "reference.py", "if local_i < size:", "if local_i <= size:")
    return "guard", ["guard: reference.py does not pass on sim", "outside the array"]


def _wrong_constant(root):
    edit(root / "shared" / "starter.py", "TPB = 4", "TPB = 2")
    return "shared", ["shared: starter.py: constant TPB should be 4, found 2"]


def _unclosed_fence(root):
    with open(root / "map2d" / "lesson.md", "a", encoding="utf-8") as f:
        f.write("\n```python\ni, j = cuda.threadIdx.x, cuda.threadIdx.y\n")
    return "map2d", ["map2d: lesson.md: has an unclosed ``` code block"]


def _reference_skips_the_technique(root):
    """A [require] table is judged on the reference too: one that only copies fails it."""
    (root / "shared" / "reference.py").write_text(
        "from numba import cuda\n\nTPB = 4\n\n\n@cuda.jit\ndef kernel(out, a, size):\n    i = cuda.grid(1)\n"
        "    if i < size:\n        out[i] = a[i] + 10\n", encoding="utf-8")
    return "shared", ["shared: reference.py does not pass on sim", "read nothing from shared memory"]


@pytest.mark.parametrize("breakage", [_leak, _starter_is_the_reference, _reference_bug, _wrong_constant,
                                      _unclosed_fence, _reference_skips_the_technique])
def test_content_check_reports_a_broken_puzzle(content_copy, breakage):
    pid, expected = breakage(content_copy)
    code, text = check([pid])
    assert code == 1, text
    status = text.splitlines()[0]
    assert status.startswith("DEFECT") and f" {pid} " in status, text
    for part in expected:
        assert part.lower() in text.lower(), text
    assert "0 defect(s)" not in text


def test_content_check_reports_a_manifest_naming_a_missing_folder(content_copy):
    edit(content_copy / "manifest.toml", 'puzzles = ["map",', 'puzzles = ["ghost", "map",')
    with pytest.raises(ContentError, match="ghost"):
        load_catalog()
    code, text = check(["map"])
    assert code == 1
    assert text.startswith("content: ") and "ghost" in text and "no folder" in text


def test_a_code_block_without_a_language_is_a_defect():
    from tutor.content_check import markdown_problems

    problems = markdown_problems("# T\n\n```\nthreads: t0 t1\n```\n")
    assert any("without a language" in p for p in problems)
    assert markdown_problems("# T\n\n```text\nthreads: t0 t1\n```\n") == []


def test_a_5000_deep_array_in_puzzle_content_is_a_content_error_naming_the_file(content_copy):
    path = content_copy / "map" / "puzzle.toml"
    path.write_text(path.read_text(encoding="utf-8") + "deep = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(ContentError) as caught:  # today: RecursionError, with a traceback thousands of lines long
        load_catalog(content_copy).get("map")
    assert str(caught.value) == (f"{path}: arrays or tables are nested too deeply (thousands of levels) to be read; "
                                 "write the values out flat")


@pytest.mark.parametrize("table,words", [
    ('[require]\nshared = "sometimes"\n', "[require] shared = 'sometimes' must be one of 'after_barrier', "
                                            "'from_other_threads'"),
    ('[require]\nout_cell_writes_per_block = 0\n', "[require] out_cell_writes_per_block = 0 must be a whole number"),
    ('[require]\ncoalesced = "yes"\n', "[require] coalesced = 'yes' must be true or false"),
    ('[require]\nbarriers = 2\n', "[require] barriers is not a requirement (shared, out_cell_writes_per_block, "
                                    "coalesced)"),
])
def test_a_malformed_require_table_is_a_content_error_naming_the_file_and_key(content_copy, table, words):
    path = content_copy / "dot" / "puzzle.toml"
    edit(path, "[require]\n", "[old_require]\n")
    edit(path, "[[configs]]", table + "\n[[configs]]")
    with pytest.raises(ContentError) as caught:
        load_catalog(content_copy).get("dot")
    assert str(caught.value).startswith("dot/puzzle.toml: ") and words in str(caught.value)


def test_requiring_shared_memory_with_a_shared_budget_of_zero_is_a_static_defect(catalog):
    warp = catalog.get("warp_reduce")
    assert warp.budget["shared_size"] == 0
    broken = dataclasses.replace(warp, require={**warp.require, "shared": "after_barrier"})
    assert static_defects(broken) == ["puzzle.toml: [require] shared asks for shared memory, but [budget] "
                                      "shared_size is 0 in config '32 values, one warp'"]
