"""The verdict under the editor: passed, or each failure in plain words, most important first.

The summary ("FAILED 0 of 4 configs passed") stands above the list, never scrolled out of view
by the failures under it. Selecting a failure tells the app to move the cursor to its line and
the thread grid to its thread.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...engine.trace import fmt_dim
from ...engine.verdict import KIND_TITLES, Failure, Verdict


# How to reach the list from the keyboard (tutor.app.keys: ctrl+e in the editor; F4 goes round too).
PICK = "ctrl+e in the code: the failures (Enter: a failure's line and thread)"


class FailureList(OptionList):
    """The failures, notes and prints of one verdict; the summary is the view's."""


class VerdictView(Vertical):
    DEFAULT_CSS = """
    VerdictView {
        background: $surface;
    }
    VerdictView > #verdict-head {
        height: auto;
        max-height: 4;
        padding: 0 1;
    }
    VerdictView > FailureList {
        height: 1fr;
        border: none;
        background: $surface;
    }
    """

    class FailureSelected(Message):
        def __init__(self, failure: Failure):
            super().__init__()
            self.failure = failure

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._failures: list[Failure] = []
        self.verdict: Verdict | None = None
        self.show_timings = True
        self._markup = ""  # the summary's markup on show

    def compose(self) -> ComposeResult:
        yield Static(id="verdict-head")
        yield FailureList(id="verdict-list")

    def on_mount(self) -> None:
        self.clear()

    @property
    def list(self) -> FailureList:
        return self.query_one(FailureList)

    @property
    def head_text(self) -> str:
        """The summary line(s) as drawn, without styles."""
        return str(self.query_one("#verdict-head", Static).render())

    def focus(self, scroll_visible: bool = True):
        return self.list.focus(scroll_visible)

    def _head(self, markup: str) -> None:
        self._markup = markup
        self.query_one("#verdict-head", Static).update(markup)

    def solved(self, message: str) -> None:
        """The verdict on show solved the puzzle for the first time: `message` says so under it, and
        leaves with it (a new run, a new puzzle)."""
        self._head(f"{self._markup}\n[b $success]{_escape(message)}[/]")

    def clear(self, text: str = "Press ctrl+r to run your kernel on every config.") -> None:
        self.verdict = None
        self._failures = []
        self.list.clear_options()
        self._head(text)

    def running(self, backend: str, starting: bool = False) -> None:
        """A run in flight; `starting`: the backend's process is still warming up (the first run)."""
        self.list.clear_options()
        what = {"sim": "the simulator"}.get(backend, backend)
        self._head(f"Starting {what} (the first run only)..." if starting else f"Running on {backend}...")

    def waiting(self, text: str) -> None:
        """Queued behind other learners' runs on a shared GPU: `text` says how many."""
        self.list.clear_options()
        self._head(f"[b]{text}[/]: your run starts as soon as it is your turn.")

    def error(self, message: str) -> None:
        self.list.clear_options()
        self._head(f"[b red]The run could not happen:[/] {_escape(message)}")

    def quiet(self, message: str) -> None:
        """A word that leaves the last verdict in place (watch mode, a line still being typed)."""
        self._head(f"[dim]{_escape(message)}[/]")

    def show(self, verdict: Verdict, seconds: float, compiling: bool = False) -> None:
        self.verdict = verdict
        self._failures = list(verdict.failures)
        options = self.list
        options.clear_options()
        total = len(verdict.configs)
        ok = sum(1 for c in verdict.configs if c.passed)
        # From the key press to this verdict, the wait for a process or the GPU included.
        took = (f" ({seconds * 1000:.0f} ms)" if seconds < 1 else f" ({seconds:.1f} s)") if self.show_timings else ""
        if verdict.passed and compiling:
            head = f"[b]Simulator: all {total} configs pass[/]{took} · the real compiler is checking it..."
        elif verdict.passed:
            head = f"[b green]PASSED[/] all {total} configs on {verdict.backend}{took}"
        elif not total:
            head = f"[b red]FAILED[/] before any config ran on {verdict.backend}{took} · {PICK}"
        else:
            head = f"[b red]FAILED[/] {ok} of {total} configs passed on {verdict.backend}{took} · {PICK}"
        head += _device_outcome(verdict)
        self._head(head)
        for n, f in enumerate(self._failures):
            where = []
            if f.line:
                where.append(f"line {f.line}")
            if f.thread is not None:
                where.append(f"thread {fmt_dim(f.thread)}" + (f" of block {fmt_dim(f.block)}" if f.block else ""))
            if f.config:
                where.append(f"config '{f.config}'")
            label = f"[b]{KIND_TITLES[f.kind]}[/]" + (f" ({', '.join(where)})" if where else "")
            options.add_option(Option(f"{label}\n{_escape(f.message)}", id=f"failure-{n}"))
        for note in verdict.notes:
            options.add_option(Option(f"[dim]note: {_escape(note)}[/]", disabled=True))
        if verdict.printed:
            options.add_option(Option(f"[dim]the kernel printed:[/]\n{_escape(verdict.printed[:800])}",
                                      disabled=True))
        if self._failures:
            options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        oid = event.option.id or ""
        if oid.startswith("failure-"):
            self.post_message(self.FailureSelected(self._failures[int(oid.split("-")[1])]))


def _device_outcome(verdict: Verdict) -> str:
    """A GPU check is judged by the GPU and by the simulator beside it: what the GPU itself said."""
    if not verdict.device or verdict.device_passed is None:
        return ""
    times = [c.kernel_ms for c in verdict.configs if c.kernel_ms is not None]
    time = f", {max(times):.3g} ms" if times else ""
    said = "outputs right" if verdict.device_passed else "outputs wrong"
    return f"\n[dim]{_escape(verdict.device)}:[/] {said}{time} · grid and checks from the simulator"


def _escape(text: str) -> str:
    """Text from a run (a kernel's prints, messages quoting the code) drawn as text: control
    characters shown escaped, markup brackets literal."""
    from tutor.textsafe import terminal_safe

    return terminal_safe(text).replace("[", r"\[")
