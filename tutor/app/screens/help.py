"""Every key the app answers to, in one place (F1)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

THREAD_KEYS = [
    ("arrow keys", "move between threads in the thread grid"),
    ("[ and ]", "step back and forward through barrier phases"),
    ("space", "play the phases as an animation"),
    (", and .", "previous and next config of the last run"),
    ("/", "the config's memory counters (sectors, bank conflicts, costly lines, the roofline) or the grid again"),
    ("up/down, Enter in the counters", "a line's lanes: which sectors or banks each lane touched; Enter also "
                                       "puts the editor's cursor on it; PgUp/PgDn scroll to the roofline"),
    ("◆ ■ ◐ in the gutter", "the config on show's costly lines: uncoalesced, bank conflicts, idle lanes "
                            "(a mark goes when its line changes)"),
    ("Enter on a failure", "jump to its line in the editor and its thread in the grid"),
    ("ctrl+p", "the command palette: every action by name"),
]


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > VerticalScroll {
        width: 80;
        height: 80%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def __init__(self, keys: list[tuple[str, str, str]]):
        """`keys`: (keys, what they do, action) of the app's mode (tutor.app.keys.listed)."""
        super().__init__()
        self.app_keys = keys

    def compose(self) -> ComposeResult:
        rows = ["# Keys", "", "| key | what it does |", "|---|---|"]
        for keys, what, _ in self.app_keys:
            rows.append(f"| {keys} | {what} |")
        rows.append("| letters | type only in the code editor (ctrl+e); elsewhere they do nothing |")
        for keys, what in THREAD_KEYS:
            rows.append(f"| {keys} | {what} |")
        rows += ["", "Your code saves itself as you type; nothing you write is lost. Escape closes this."]
        with VerticalScroll():
            yield Markdown("\n".join(rows))
