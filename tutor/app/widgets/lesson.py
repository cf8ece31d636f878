"""The lesson: Markdown whose code wraps and whose diagrams scroll sideways inside their own boxes.

From 120 columns up the lesson pane is wide enough for every code block the content holds
(tests/content/test_widths.py keeps them to 46 columns). Narrower, a block must still not be cut
at the pane's edge (at 27 columns the learner read `shared = cuda.shar`):
- code (a ```python fence, or any fence that is not a drawing) wraps, and each line that goes on
  below its start is marked with CONTINUED, so the learner can tell it from a new line of code;
- a drawing (a ```text fence) would lie if wrapped, so it keeps its own sideways scroll, with a
  visible bar, and the left and right arrows move every drawing of the lesson together while the
  lesson has focus. That is the last resort, for terminals under 120 columns.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownFence

STEP = 4
DRAWINGS = {"text"}  # fence languages that are pictures: they scroll sideways, never wrap
CONTINUED = "↪ "  # starts the part of a wrapped code line that goes on below it


class LessonScroll(VerticalScroll):
    DEFAULT_CSS = """
    LessonScroll {
        scrollbar-size-vertical: 1;
    }
    LessonScroll > Markdown {
        padding: 0 1;
    }
    LessonScroll MarkdownFence {
        scrollbar-size-horizontal: 1;
    }
    LessonScroll MarkdownFence > Label {
        padding: 0 1;
    }
    LessonScroll MarkdownFence.-wrap {
        overflow-x: hidden;
    }
    LessonScroll MarkdownFence.-wrap > Label {
        width: 1fr;
    }
    """
    BINDINGS = [
        Binding("left", "sideways(-1)", "diagrams left", show=False),
        Binding("right", "sideways(1)", "diagrams right", show=False),
    ]

    def fences(self) -> list[MarkdownFence]:
        return list(self.query(MarkdownFence))

    def action_sideways(self, direction: int) -> None:
        for fence in self.fences():
            fence.scroll_to(x=max(0, fence.scroll_x + direction * STEP), animate=False)


class LessonFence(MarkdownFence):
    """A code block of the lesson: code wraps at the pane's edge (with CONTINUED where a line goes
    on), a drawing scrolls sideways."""

    def __init__(self, markdown: Markdown, token, code: str) -> None:
        super().__init__(markdown, token, code)
        self.set_class(self.wraps, "-wrap")
        self._folded_at = 0  # the width the code was last folded for (0: shown as written)

    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False):
        """A block that names no language (an indented block: a formula, a diagram) is plain text.
        Textual would ask Pygments to guess one at every restyle: the first guess imports every
        lexer Pygments has (half a second, on the key that opened the lesson), and the guesses
        colour a formula as SQL."""
        return super().highlight(code, language or "text", ansi, dark)

    @property
    def wraps(self) -> bool:
        return (self.lexer or "").strip().lower() not in DRAWINGS

    def on_resize(self) -> None:
        self._fold()

    def set_content(self, content: Content) -> None:
        self._folded_at = 0
        super().set_content(content)
        self._fold()

    def _fold(self) -> None:
        """Code wider than the block's text area, folded into it; a drawing is left as drawn."""
        if not self.wraps or not self.is_mounted:
            return
        found = self.query("#code-content")
        if not found:  # restyled while its label is not mounted yet, or already removed
            return
        label = found.first()
        width = label.content_region.width
        if width <= cell_len(CONTINUED) or width == self._folded_at:
            return
        self._folded_at = width
        label.update(fold(self._highlighted_code, width))


class LessonMarkdown(Markdown):
    """The lesson's Markdown (and any we write ourselves): its code blocks are LessonFences, with
    their own language or none, never a guessed one."""

    BLOCKS = {**Markdown.BLOCKS, "fence": LessonFence, "code_block": LessonFence}

    _showing: str | None = None

    def show_lesson(self, markdown: str) -> None:
        """Another puzzle's lesson. The old one leaves the screen with the key that asked for it:
        the new one's blocks mount a moment later (a tenth of a second, more on a busy machine),
        and until then the pane shows nothing rather than the lesson of the puzzle left behind."""
        self._showing = markdown
        self.visible = False
        self.run_worker(self._update_then_show(markdown), group="lesson")

    async def _update_then_show(self, markdown: str) -> None:
        await self.update(markdown)
        if self._showing == markdown:  # a later lesson, asked meanwhile, shows itself
            self.visible = True


def fold(code: Content, width: int) -> Content:
    """Each line of `code` cut into pieces of at most `width` cells; every piece after a line's
    first starts with CONTINUED. The highlighting goes with the characters."""
    mark = Content.styled(CONTINUED, "dim")
    room = width - mark.cell_length
    lines = []
    for line in code.split("\n"):
        if line.cell_length <= width:
            lines.append(line)
            continue
        cut = _cut(line, width)
        lines.append(line[:cut])
        rest = line[cut:]
        while rest.cell_length > 0:
            cut = _cut(rest, room)
            lines.append(mark + rest[:cut])
            rest = rest[cut:]
    return Content("\n").join(lines)


def _cut(line: Content, width: int) -> int:
    """Where to cut `line` to keep at most `width` cells: after the last space that fits, where
    there is one past the line's indent, else at the width."""
    plain = line.plain
    end, cells = 0, 0
    while end < len(plain) and cells + cell_len(plain[end]) <= width:
        cells += cell_len(plain[end])
        end += 1
    if end >= len(plain):
        return end
    indent = len(plain) - len(plain.lstrip())
    space = plain.rfind(" ", indent, end)
    return space + 1 if space > indent else max(end, 1)
