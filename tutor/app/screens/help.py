"""Every key the app answers to, in one place (F1 or ?)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

# A terminal sends ctrl+h as Backspace: the binding serves the terminals that tell them apart, but
# advising it would send most learners' Backspace hunting for hints.
NOT_LISTED = {"ctrl+h"}

THREAD_KEYS = [
    ("arrow keys", "move between threads in the thread grid"),
    ("[ and ]", "step back and forward through barrier phases"),
    ("p", "play the phases as an animation"),
    (", and .", "previous and next config of the last run"),
    ("c", "the config's memory counters (sectors, bank conflicts, costly lines, the roofline) or the grid again"),
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
    BINDINGS = [Binding("escape,f1,q,question_mark", "dismiss", "Close")]

    def __init__(self, bindings):
        super().__init__()
        self.app_bindings = bindings

    def compose(self) -> ComposeResult:
        rows = ["# Keys", "", "| key | what it does |", "|---|---|"]
        seen = set()
        for b in self.app_bindings:
            if b.action in seen and not b.show or b.key in NOT_LISTED:
                continue
            seen.add(b.action)
            keys = " / ".join(k for bb in self.app_bindings if bb.action == b.action for k in bb.key.split(",")
                              if k not in NOT_LISTED)
            what = b.tooltip or b.description
            rows.append(f"| {keys.replace('question_mark', '?')} | {what} |")
        for keys, what in THREAD_KEYS:
            rows.append(f"| {keys} | {what} |")
        rows += ["", "Your code saves itself as you type; nothing you write is lost. Escape closes this."]
        with VerticalScroll():
            yield Markdown("\n".join(rows))
