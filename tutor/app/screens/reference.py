"""The reference solution beside the learner's own, with the difference between them.

Side by side where both codes fit whole in half the screen; one above the other where they do not
(at 120 columns, side by side cut the reference at 52 characters). Each code keeps its title, so
the learner knows which is theirs in either arrangement.
"""

from __future__ import annotations

from rich.syntax import Syntax
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Markdown, Static, TextArea

from tutor.sourcelines import unified_diff
from tutor.textsafe import terminal_safe
from ..widgets.editor import CodeEditor

# Beside an editor's code: its vertical scrollbar, a cell for the cursor at a line's end, and the
# line between the two sides.
EDITOR_FRAME = 4


class ReferenceScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    ReferenceScreen > Vertical {
        background: $surface;
        border: thick $primary;
        margin: 1 1;
    }
    ReferenceScreen #sides {
        height: 2fr;
    }
    ReferenceScreen.-stacked #sides {
        layout: vertical;
    }
    ReferenceScreen #sides > TextArea {
        width: 1fr;
        height: 1fr;
        border: none;
        border-top: solid $primary-muted;
        border-title-align: left;
        border-title-color: $text;
        border-title-style: bold;
    }
    ReferenceScreen #sides > #theirs {
        border-left: solid $primary-muted;
    }
    ReferenceScreen.-stacked #sides > #theirs {
        border-left: none;
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
            yield Label(f"[b]{self.puzzle.title}[/]: your code, the reference, and what differs. Escape closes.")
            with Horizontal(id="sides"):
                mine = CodeEditor.code_editor(self.learner_code, language="python", read_only=True, id="mine")
                mine.border_title = "your code"
                yield mine
                theirs = CodeEditor.code_editor(self.puzzle.reference, language="python", read_only=True,
                                                id="theirs")
                theirs.border_title = "reference"
                yield theirs
            with VerticalScroll(id="diff"):  # Syntax draws the learner's characters as they are
                yield Static(Syntax(terminal_safe(diff) or "(identical)", "diff", theme="ansi_dark"))
                walkthrough = getattr(self.puzzle, "walkthrough", "")  # a task's worked answer has one
                if walkthrough:
                    yield Markdown(walkthrough, id="walkthrough", open_links=False)

    def on_resize(self) -> None:
        self._arrange()

    def on_mount(self) -> None:
        self._arrange()

    def _arrange(self) -> None:
        """Side by side only where each half holds the longest line of either code whole."""
        sides = self.query_one("#sides", Horizontal)
        if not sides.size.width:
            return
        editors = list(sides.query(TextArea))
        longest = max((len(line) for editor in editors for line in editor.text.splitlines()), default=0)
        need = longest + max(editor.gutter_width for editor in editors) + EDITOR_FRAME
        self.set_class(2 * need > sides.size.width, "-stacked")
