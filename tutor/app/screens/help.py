"""Every key the app answers to, in one place (F1)."""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

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
        rows = [(keys, what) for keys, what, _ in self.app_keys]
        rows.append(("letters", "type only in the code editor (ctrl+e); elsewhere they do nothing"))
        rows += THREAD_KEYS
        with VerticalScroll():
            yield Static(Content.from_markup("[b]Keys[/b]\n"))
            yield Static(_table(rows))
            yield Static("\nYour code saves itself as you type; nothing you write is lost. Escape closes this.")


def _table(rows: list[tuple[str, str]]) -> Table:
    """The keys as one widget: a Markdown table made a widget of every cell (58 of them), and F1
    took a quarter of a second to draw, several on a busy machine."""
    table = Table(box=box.SIMPLE_HEAD, expand=True, padding=(0, 1), header_style="bold")
    table.add_column("key", ratio=1, style="bold")
    table.add_column("what it does", ratio=2)
    for keys, what in rows:
        table.add_row(Text(keys), Text(what))
    return table
