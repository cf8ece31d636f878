"""The hints panel: authored hints revealed one level at a time, never all at once.

The AI hint (a later feature) streams into the same panel; the ladder here is what serves offline.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Markdown, Static

LEVEL_NAMES = {1: "a nudge", 2: "the idea", 3: "near-pseudocode"}


class HintsPanel(Vertical):
    DEFAULT_CSS = """
    HintsPanel {
        height: auto;
        border-top: solid $primary-muted;
    }
    HintsPanel #hints-title {
        color: $text-muted;
        padding: 0 1;
    }
    HintsPanel Markdown {
        margin: 0;
    }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._hints: list[str] = []
        self.shown = 0

    def compose(self) -> ComposeResult:
        yield Static("Hints: press ctrl+h (or h outside the editor) for a nudge.", id="hints-title")

    def show_puzzle(self, puzzle, already_shown: int) -> None:
        self._hints = list(puzzle.hints)
        self.shown = min(already_shown, len(self._hints))
        self._refresh_hints()

    def reveal_next(self) -> int | None:
        """Reveal the next level; returns its number, or None when the ladder is used up."""
        if self.shown >= len(self._hints):
            return None
        self.shown += 1
        self._refresh_hints()
        return self.shown

    def _refresh_hints(self) -> None:
        parts = []
        for n, text in enumerate(self._hints[: self.shown], 1):
            parts.append(f"**Hint {n} ({LEVEL_NAMES.get(n, 'more')})** {text}")
        left = len(self._hints) - self.shown
        title = (f"Hints: {self.shown} of {len(self._hints)} shown" + (" · ctrl+h for the next" if left else "")
                 if self.shown else "Hints: press ctrl+h (or h outside the editor) for a nudge.")
        self.query_one("#hints-title", Static).update(title)
        found = self.query("#hints-text")
        if not parts and not found:
            return  # no Markdown widget until there is a hint to show: it is costly to build
        text = found.first(Markdown) if found else None
        if text is None:
            text = Markdown(id="hints-text")
            self.mount(text)
        text.update("\n\n".join(parts))
        text.display = bool(parts)
