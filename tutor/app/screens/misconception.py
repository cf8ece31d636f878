"""One shared mistake, opened from the room view: who made it and, where the room allows it, the code.

The learners are listed with their time on the puzzle and the line their latest failing run failed
at; moving along the list shows each one's kernel as saved now, the failing line marked ▶. Where the
room keeps code private (tutor.workshop.room_code), the screen says so and why, and shows none.
A learner may have typed since that run, so the line is named as the run's, not as today's truth.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer, Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tutor.sourcelines import python_lines
from tutor.textsafe import terminal_safe, visible
from tutor.workshop.room_code import Kernel
from ..widgets.footer import FittingFooter
from ..widgets.room_grid import duration, style_of

MAX_LINES = 400  # of a learner's kernel on show, around the failing line
MAX_WIDTH = 300  # characters of one of its lines


@dataclass(frozen=True)
class LearnerEntry:
    id: str
    label: str          # terminal-safe
    active_s: float | None
    line: int | None    # where their latest failing run failed


class MisconceptionScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    MisconceptionScreen > Vertical {
        background: $surface;
        border: thick $primary;
        margin: 1 1;
        padding: 0 1;
    }
    MisconceptionScreen #heading {
        text-style: bold;
        margin-bottom: 1;
    }
    MisconceptionScreen #learners {
        height: auto;
        max-height: 30%;
        border: none;
        border-top: solid $primary-muted;
    }
    MisconceptionScreen #caption {
        border-top: solid $primary-muted;
        color: $text-muted;
    }
    MisconceptionScreen #kernel-scroll {
        height: 1fr;
    }
    MisconceptionScreen #kernel {
        width: auto;
    }
    """
    BINDINGS = [Binding("escape", "dismiss", "Back")]

    def __init__(self, heading: str, puzzle: str, learners: list[LearnerEntry], kernel: Callable[[str], Kernel]):
        """`heading`: the mistake in words (terminal-safe); `kernel(learner id)`: their code or why not."""
        super().__init__()
        self.heading = heading
        self.puzzle = puzzle
        self.learners = learners
        self.kernel = kernel
        self.shown: str | None = None  # the learner whose code (or why none) is on show

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.heading), id="heading")
            yield OptionList(*(Option(self._line_of(learner), id=learner.id) for learner in self.learners),
                             id="learners")
            yield Static(id="caption")
            with ScrollableContainer(id="kernel-scroll"):
                yield Static(id="kernel")
        yield FittingFooter(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        listed = self.query_one("#learners", OptionList)
        listed.focus()
        if self.learners:
            # the first learner whose code can be shown, else the first
            first = next((n for n, learner in enumerate(self.learners) if self.kernel(learner.id).text is not None), 0)
            listed.highlighted = first
            self._show(self.learners[first])

    def _line_of(self, learner: LearnerEntry) -> Text:
        parts = [learner.label]
        if learner.active_s is not None:
            parts.append(f"{duration(learner.active_s)} on it")
        if learner.line:
            parts.append(f"failed at line {learner.line}")
        return Text(" · ".join(parts))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        learner = next((x for x in self.learners if x.id == event.option.id), None)
        if learner is not None:
            self._show(learner)

    def _show(self, learner: LearnerEntry) -> None:
        self.shown = learner.id
        kernel = self.kernel(learner.id)
        caption, code = self.query_one("#caption", Static), self.query_one("#kernel", Static)
        if kernel.text is None:
            caption.update(Text(f"{learner.label}: no code shown: {terminal_safe(kernel.why or '')}"))
            code.update("")
            return
        where = f"; ▶ line {learner.line}: where their latest failing run failed" if learner.line else ""
        caption.update(Text(f"{learner.label}'s {self.puzzle}, as saved now{where}"))
        shown, row = marked_code(kernel.text, learner.line, self.app.get_css_variables())
        code.update(shown)
        scroll = self.query_one("#kernel-scroll")
        scroll.scroll_home(animate=False)
        if learner.line:  # the marked line in view, a few lines of what leads to it above
            self.call_after_refresh(scroll.scroll_to, y=max(0, row - 3), animate=False)


def marked_code(text: str, line: int | None, colours: dict[str, str]) -> tuple[Text, int]:
    """`text` with line numbers, `line` marked ▶ and coloured as a failure is, and the row the mark is
    on. Someone else's code: shown never as markup, every character visible (a zero-width space as
    `\\u200b`, a U+2028 as itself and not as a second line: lines are Python's, or the mark would
    point at another one), at most MAX_LINES lines around the mark and MAX_WIDTH characters of each:
    a kernel is a few dozen lines, and twenty thousand took the screen 13 s to open."""
    lines = python_lines(text)
    if len(lines) > 1 and not lines[-1]:
        lines.pop()  # the newline that ends the file
    first = 0
    if len(lines) > MAX_LINES:
        first = min(max(0, (line or 1) - 1 - MAX_LINES // 4), len(lines) - MAX_LINES)
    shown = range(first, min(len(lines), first + MAX_LINES))
    width = len(str(shown[-1] + 1))
    out = Text(no_wrap=True, end="")
    mark = style_of("text-error", colours, bold=True)
    dim = Style(dim=True)
    rows = []
    if first:
        rows.append((f"  {'':>{width}} ┆ … lines 1-{first} not shown", dim))
    marked_row = 0
    for n in shown:
        code = visible(lines[n])
        if len(code) > MAX_WIDTH:
            code = code[:MAX_WIDTH] + f"… ({len(code) - MAX_WIDTH} more characters)"
        here = n + 1 == line
        if here:
            marked_row = len(rows)
        style = mark if here else dim
        rows.append((f"{'▶' if here else ' '} {n + 1:>{width}} │ ", style, code, mark if here else ""))
    if shown[-1] + 1 < len(lines):
        rows.append((f"  {'':>{width}} ┆ … lines {shown[-1] + 2}-{len(lines)} not shown", dim))
    for k, row in enumerate(rows):
        out.append(row[0], row[1])
        if len(row) > 2:
            out.append(row[2], row[3])
        if k < len(rows) - 1:
            out.append("\n")
    return out, marked_row
