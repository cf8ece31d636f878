"""The hints panel: hints revealed one level at a time, never all at once.

Authored hints serve offline. With a model configured, an AI hint shows whole once the leak guard
has passed it; while the model writes, the panel says how much has arrived, never what: any line
of a reply may be code (an indented block, a prose line), so none of it is safe to show early.

The model's text is Markdown to render, but never a terminal's to obey: control characters are shown
escaped (tutor.textsafe) and its links are not opened on a click. The status line is plain text.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Markdown, Static

from tutor.textsafe import terminal_safe

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
    HintsPanel #hints-scroll {
        height: auto;
        max-height: 40vh;
    }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._hints: list[str] = []
        self.shown = 0
        self._ai: dict[int, tuple[str, str]] = {}  # level -> (heading, Markdown) of AI hints this visit
        self._streaming: int | None = None
        self._model = ""
        self._status = ""  # the request in flight, or what the last hint cost
        self._note = ""    # a withheld reply, a failure

    def compose(self) -> ComposeResult:
        yield Static("Hints: press F7 for a nudge.", id="hints-title", markup=False)
        # Its own scroll, so hint 3 is never below a fixed edge: the wheel and the arrow keys move it.
        yield VerticalScroll(id="hints-scroll")

    def show_puzzle(self, puzzle, already_shown: int) -> None:
        self._hints = list(puzzle.hints)
        self.shown = min(already_shown, len(self._hints))
        self._ai.clear()
        self._streaming = None
        self._status = self._note = ""
        self._refresh_hints()

    @property
    def streaming(self) -> bool:
        return self._streaming is not None

    def seen(self) -> list[str]:
        """The hints on the panel, level by level, as the learner read them: the model's text where
        an AI hint stood in for a level, the authored one elsewhere (for "hints already shown")."""
        out = []
        for n in range(1, max([self.shown, *self._ai]) + 1):
            if n in self._ai and n != self._streaming:
                out.append(self._ai[n][1])
            elif n <= self.shown and n not in self._ai:
                out.append(self._hints[n - 1])
        return [text for text in out if text]

    def begin_ai(self, level: int, model: str) -> None:
        self._streaming = level
        self._model = model
        self._status = f"asking {model} · esc cancels"
        self._note = ""
        self._ai[level] = (f"Hint {level} (AI · {LEVEL_NAMES.get(level, 'full code')})", "")
        self._refresh_hints()

    def progress(self, received: int) -> None:
        """How much of the reply has arrived: a count, never its text, until the guard has judged it."""
        if self._streaming is None:
            return
        self._status = (f"{self._model} is writing: {received} characters so far, shown once checked "
                        "· esc cancels")
        self._refresh_hints()

    def stream(self, text: str) -> None:
        """The reply, whole, once the leak guard has passed it."""
        if self._streaming is None:
            return
        heading, so_far = self._ai[self._streaming]
        self._ai[self._streaming] = (heading, so_far + terminal_safe(text))
        self._refresh_hints()

    def status(self, text: str) -> None:
        """A line under the title: a withheld reply, a failure."""
        self._note = terminal_safe(text)
        self._refresh_hints()

    def finish_ai(self, outcome) -> None:
        """The hint shown whole: the model's (guard passed) or the authored one for that level."""
        level = outcome.level
        self._streaming = None
        self._note = ""
        if outcome.cancelled:
            self._ai.pop(level, None)
            self._status = "Hint cancelled."
        elif outcome.source == "ai":
            heading = self._ai.get(level, (f"Hint {level} (AI)", ""))[0]
            self._ai[level] = (heading, terminal_safe(outcome.text))
            self._status = outcome.usage.text() + (f" · {outcome.leaks} reply(ies) withheld" if outcome.leaks else "")
        else:
            self._ai.pop(level, None)
            self._status = terminal_safe(outcome.note or "")
        if not outcome.cancelled:
            self.shown = max(self.shown, min(level, len(self._hints)))
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
            if n in self._ai:
                continue
            parts.append(f"**Hint {n} ({LEVEL_NAMES.get(n, 'more')})** {text}")
        for n in sorted(self._ai):
            heading, text = self._ai[n]
            parts.append(f"**{heading}** {text or '…'}")
        left = len(self._hints) - self.shown
        title = (f"Hints: {self.shown} of {len(self._hints)} shown" + (" · F7 for the next" if left else "")
                 if self.shown or self._ai else "Hints: press F7 for a nudge.")
        for line in (self._note, self._status):
            if line:
                title += f"\n{line}"
        self.query_one("#hints-title", Static).update(title)
        found = self.query("#hints-text")
        if not parts and not found:
            return  # no Markdown widget until there is a hint to show: it is costly to build
        scroll = self.query_one("#hints-scroll", VerticalScroll)
        if not found:  # built with its text: an update before it is mounted would be lost
            done = scroll.mount(Markdown("\n\n".join(parts), id="hints-text", open_links=False))
        else:
            text = found.first(Markdown)
            done = text.update("\n\n".join(parts))
            text.display = bool(parts)
        self.call_next(self._show_newest, done)

    async def _show_newest(self, done) -> None:
        """The newest hint is the one just asked for: once its text is laid out, the end of the box."""
        await done
        scroll = self.query_one("#hints-scroll", VerticalScroll)
        self.call_after_refresh(lambda: scroll.scroll_end(animate=False, immediate=True))
