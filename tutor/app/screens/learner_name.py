"""A workshop asks each learner's name once, so the facilitator's class table can say who is where.

The name is kept in the learner's data folder (tutor.workshop.learner) and never asked again. It cannot be
skipped with escape, since a facilitator who asked for names wants them; ctrl+q still quits.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from tutor.workshop.learner import MAX_NAME, save_name
from ..widgets.keys_in_order import InOrderInput


class NameScreen(ModalScreen[str | None]):
    # priority: the name is taken when the app reads Enter (once the box holds the letters typed before
    # it, TutorApp._check_bindings), so the letters typed next reach the editor, not the closing box
    BINDINGS = [Binding("enter", "submit", "OK", priority=True)]
    DEFAULT_CSS = """
    NameScreen {
        align: center middle;
    }
    NameScreen > Vertical {
        width: 64;
        height: auto;
        border: thick $primary;
        background: $surface;
        padding: 1 2;
    }
    NameScreen Label {
        width: 100%;
    }
    NameScreen #name-problem {
        color: $error;
        height: auto;
    }
    """

    def __init__(self, workshop_title: str, data_dir: Path):
        super().__init__()
        self.workshop_title = workshop_title
        self.data_dir = data_dir

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"[b]Welcome to {_escape(self.workshop_title)}[/]")
            yield Label("Your name (or a nickname), so your facilitator can see how you are getting on. "
                        "You are asked only once.")
            yield InOrderInput(placeholder="your name", max_length=MAX_NAME + 20, id="name")
            yield Label("", id="name-problem")

    def on_mount(self) -> None:
        self.query_one("#name", Input).focus()

    def action_submit(self) -> None:
        problem = self.query_one("#name-problem", Label)
        try:
            learner = save_name(self.data_dir, self.query_one("#name", Input).value)
        except ValueError as e:
            problem.update(_escape(str(e)))
            return
        except OSError as e:
            self.app.notify(f"Your name could not be saved in {self.data_dir} ({e.strerror or e}); "
                            "`gpu-tutor export --name NAME` puts it on your progress file.", severity="warning")
            self.dismiss(None)
            return
        self.dismiss(learner.name)


def _escape(text: str) -> str:
    return text.replace("[", r"\[")
