"""The verdict under the editor: passed, or each failure in plain words, most important first.

Selecting a failure tells the app to move the cursor to its line and the thread grid to its thread.
"""

from __future__ import annotations

from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ...engine.trace import fmt_dim
from ...engine.verdict import KIND_TITLES, Failure, Verdict


class VerdictView(OptionList):
    DEFAULT_CSS = """
    VerdictView {
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

    def on_mount(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.verdict = None
        self._failures = []
        self.clear_options()
        self.add_option(Option("Press ctrl+r to run your kernel on every config.", disabled=True))

    def running(self, backend: str) -> None:
        self.clear_options()
        self.add_option(Option(f"Running on {backend}...", disabled=True))

    def waiting(self, text: str) -> None:
        """Queued behind other learners' runs on a shared GPU: `text` says how many."""
        self.clear_options()
        self.add_option(Option(f"[b]{text}[/]: your run starts as soon as it is your turn.", disabled=True))

    def error(self, message: str) -> None:
        self.clear_options()
        self.add_option(Option(f"[b red]The run could not happen:[/] {_escape(message)}", disabled=True))

    def show(self, verdict: Verdict, seconds: float, compiling: bool = False) -> None:
        self.verdict = verdict
        self._failures = list(verdict.failures)
        self.clear_options()
        total = len(verdict.configs)
        ok = sum(1 for c in verdict.configs if c.passed)
        took = f" ({seconds * 1000:.0f} ms)" if self.show_timings else ""
        if verdict.passed and compiling:
            head = f"[b]Simulator: all {total} configs pass[/]{took} · the real compiler is checking it..."
        elif verdict.passed:
            head = f"[b green]PASSED[/] all {total} configs on {verdict.backend}{took}"
        elif not total:
            head = f"[b red]FAILED[/] before any config ran on {verdict.backend}{took} · select a failure to see its line"
        else:
            head = (f"[b red]FAILED[/] {ok} of {total} configs passed on {verdict.backend}{took} "
                    "· select a failure to see its line and thread")
        head += _device_outcome(verdict)
        self.add_option(Option(head, disabled=True))
        for n, f in enumerate(self._failures):
            where = []
            if f.line:
                where.append(f"line {f.line}")
            if f.thread is not None:
                where.append(f"thread {fmt_dim(f.thread)}" + (f" of block {fmt_dim(f.block)}" if f.block else ""))
            if f.config:
                where.append(f"config '{f.config}'")
            label = f"[b]{KIND_TITLES[f.kind]}[/]" + (f" ({', '.join(where)})" if where else "")
            self.add_option(Option(f"{label}\n{_escape(f.message)}", id=f"failure-{n}"))
        for note in verdict.notes:
            self.add_option(Option(f"[dim]note: {_escape(note)}[/]", disabled=True))
        if verdict.printed:
            self.add_option(Option(f"[dim]the kernel printed:[/]\n{_escape(verdict.printed[:800])}", disabled=True))
        if self._failures:
            self.highlighted = 1

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
    from ...textsafe import terminal_safe

    return terminal_safe(text).replace("[", r"\[")
