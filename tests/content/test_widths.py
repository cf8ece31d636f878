"""Every puzzle's code and every lesson picture fits the app's panes.

At a 120x40 terminal the editor shows about 55 characters of code, so no line of a reference or a
starter is longer. From 120 columns up a lesson's code block has 46 columns (app.LESSON_MIN), so no
line of a code block in a lesson or a "what you learned" note is wider: a ``` fence, or an indented
block. Markdown wraps prose; narrower, the app wraps code and scrolls drawings, never cuts them
(tests/app/test_nothing_cut.py). Widths are terminal cells, as the app's renderer counts.
"""

import tomllib
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from rich.cells import cell_len

CONTENT = Path(__file__).resolve().parents[2] / "content"
CODE_WIDTH = 55
FENCE_WIDTH = 46

# Code blocks that stay wider than FENCE_WIDTH because a narrower drawing would lose what it
# shows; the app scrolls them sideways. Key: (puzzle id, file name, first line of the block),
# value: the reason. Every lesson fits today, so the list is empty; keep it short.
WIDE_FENCES: dict[tuple[str, str, str], str] = {}


def puzzle_ids() -> list[str]:
    manifest = tomllib.loads((CONTENT / "manifest.toml").read_text(encoding="utf-8"))
    return [pid for track in manifest["tracks"] for pid in track["puzzles"]]


PUZZLES = puzzle_ids()


def code_blocks(text: str) -> list[list[tuple[int, str]]]:
    """The lines of each code block as the lesson pane shows them, numbered as in the file."""
    found = []
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        if token.type in ("fence", "code_block"):
            first = token.map[0] + (2 if token.type == "fence" else 1)
            found.append([(first + n, line) for n, line in enumerate(token.content.splitlines())])
    return found


def too_wide(lines, width):
    return [(n, cell_len(line)) for n, line in lines if cell_len(line) > width]


def test_the_manifest_lists_every_puzzle_once():
    assert len(PUZZLES) >= 22 and len(set(PUZZLES)) == len(PUZZLES)


@pytest.mark.parametrize("name", ["reference.py", "starter.py"])
@pytest.mark.parametrize("pid", PUZZLES)
def test_code_fits_the_editor(pid, name):
    text = (CONTENT / pid / name).read_text(encoding="utf-8")
    long = too_wide(enumerate(text.splitlines(), 1), CODE_WIDTH)
    assert long == [], f"{pid}/{name}: (line, width) over {CODE_WIDTH}: {long}"


@pytest.mark.parametrize("name", ["lesson.md", "learned.md"])
@pytest.mark.parametrize("pid", PUZZLES)
def test_code_blocks_fit_the_lesson_pane(pid, name):
    text = (CONTENT / pid / name).read_text(encoding="utf-8")
    long = []
    for block in code_blocks(text):
        if block and (pid, name, block[0][1]) not in WIDE_FENCES:
            long += too_wide(block, FENCE_WIDTH)
    assert long == [], f"{pid}/{name}: (line, width) over {FENCE_WIDTH}: {long}"


def test_every_allowed_wide_block_is_still_there_and_still_wide():
    for (pid, name, first), reason in WIDE_FENCES.items():
        assert reason.strip(), f"{pid}/{name}: say why the block stays wide"
        blocks = code_blocks((CONTENT / pid / name).read_text(encoding="utf-8"))
        block = next((b for b in blocks if b and b[0][1] == first), None)
        assert block is not None, f"{pid}/{name}: no block starts {first!r}: drop it"
        assert too_wide(block, FENCE_WIDTH), f"{pid}/{name}: {first!r} fits now: drop it"


def test_the_reader_finds_fenced_and_indented_blocks_and_their_lines():
    text = "# T\n\n```text\nab\n```\nprose\n\n```python\nx = 1\n\ny\n```\n\n    z = 2\n"
    assert code_blocks(text) == [[(4, "ab")], [(9, "x = 1"), (10, ""), (11, "y")], [(14, "z = 2")]]
