"""The puzzle list: tracks, solved marks and a progress bar; Enter opens a puzzle."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, ProgressBar
from textual.widgets.option_list import Option


class PuzzleList(ModalScreen[str | None]):
    DEFAULT_CSS = """
    PuzzleList {
        align: center middle;
    }
    PuzzleList > Vertical {
        width: 72;
        max-height: 90%;
        height: auto;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    PuzzleList OptionList {
        height: auto;
        max-height: 30;
        border: none;
    }
    PuzzleList ProgressBar {
        margin: 1 0;
    }
    """
    # Enter is priority: the list closes when the app reads it (TutorApp._check_bindings), so the letters
    # typed next reach the puzzle's editor; the list's own Enter closed it only from the list's queue.
    BINDINGS = [Binding("escape", "dismiss(None)", "Close"), Binding("enter", "open", "Open", priority=True)]

    def __init__(self, catalog, store, current: str):
        super().__init__()
        self.catalog = catalog
        self.store = store
        self.current = current

    def compose(self) -> ComposeResult:
        ids = [p.id for p in self.catalog.ordered()]
        solved = self.store.solved_count(ids)
        with Vertical():
            yield Label(f"[b]Puzzles[/]  {solved} of {len(ids)} solved · Enter opens, Escape closes")
            bar = ProgressBar(total=len(ids), show_eta=False, id="progress")
            bar.progress = solved
            yield bar
            options = []
            n = 0
            for track in self.catalog.tracks:
                options.append(Option(f"[b]{track.title}[/]", disabled=True))
                for pid in track.puzzles:
                    n += 1
                    p = self.catalog.puzzles[pid]
                    mark = "[green]✓[/]" if self.store.progress(pid).solved else " "
                    here = " [dim](current)[/]" if pid == self.current else ""
                    options.append(Option(f" {mark} {n:2d}. {p.title}{here}", id=pid))
            yield OptionList(*options, id="puzzle-options")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.focus()
        for i in range(options.option_count):
            if options.get_option_at_index(i).id == self.current:
                options.highlighted = i

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)  # a click

    def action_open(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None:
            option = options.get_option_at_index(options.highlighted)
            if option.id and not option.disabled:
                self.dismiss(option.id)
