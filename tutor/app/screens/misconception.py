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

from tutor.textsafe import terminal_safe
from tutor.workshop.room_code import Kernel
from ..widgets.footer import FittingFooter
from ..widgets.room_grid import duration, style_of


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
        code.update(marked_code(kernel.text, learner.line, self.app.get_css_variables()))
        scroll = self.query_one("#kernel-scroll")
        scroll.scroll_home(animate=False)
        if learner.line:  # the marked line in view, a few lines of what leads to it above
            self.call_after_refresh(scroll.scroll_to, y=max(0, learner.line - 4), animate=False)


def marked_code(text: str, line: int | None, colours: dict[str, str]) -> Text:
    """`text` with line numbers, `line` marked ▶ and coloured as a failure is: someone else's code, so
    shown terminal-safe and never as markup."""
    lines = terminal_safe(text).splitlines() or [""]
    width = len(str(len(lines)))
    out = Text(no_wrap=True, end="")
    mark = style_of("text-error", colours, bold=True)
    for n, code in enumerate(lines, 1):
        here = n == line
        out.append(f"{'▶' if here else ' '} {n:>{width}} │ ", mark if here else Style(dim=True))
        out.append(code, mark if here else "")
        if n < len(lines):
            out.append("\n")
    return out
