"""The reference solution beside the learner's own, with the difference between them."""

from __future__ import annotations

from rich.syntax import Syntax
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from tutor.sourcelines import unified_diff
from tutor.textsafe import terminal_safe
from ..widgets.editor import CodeEditor


class ReferenceScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    ReferenceScreen > Vertical {
        background: $surface;
        border: thick $primary;
        margin: 1 2;
    }
    ReferenceScreen Horizontal {
        height: 2fr;
    }
    ReferenceScreen TextArea {
        width: 1fr;
    }
    ReferenceScreen #diff {
        height: 1fr;
        border-top: solid $primary-muted;
    }
    """
    BINDINGS = [Binding("escape,f3", "dismiss", "Close")]

    def __init__(self, puzzle, learner_code: str, notice: str | None = None):
        super().__init__()
        self.puzzle = puzzle  # a Puzzle, or a WorkedAnswer (tutor.coach.optimise): a title and a reference
        self.learner_code = learner_code
        self.notice = notice  # why it opened, where it opened instead of something else

    def compose(self) -> ComposeResult:
        diff = unified_diff(self.learner_code, self.puzzle.reference, "your code", "reference")
        with Vertical():
            if self.notice:
                yield Label(self.notice, id="reference-notice", markup=False)
            yield Label(f"[b]{self.puzzle.title}[/]: your code (left) and the reference (right). Escape closes.")
            with Horizontal():
                yield CodeEditor.code_editor(self.learner_code, language="python", read_only=True, id="mine")
                yield CodeEditor.code_editor(self.puzzle.reference, language="python", read_only=True, id="theirs")
            with VerticalScroll(id="diff"):  # Syntax draws the learner's characters as they are
                yield Static(Syntax(terminal_safe(diff) or "(identical)", "diff", theme="ansi_dark"))
