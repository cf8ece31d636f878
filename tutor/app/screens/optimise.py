"""The AI coach's optimiser in the app: set a budget, watch the rounds, read the verified result.

The loop (tutor.coach.optimise) runs in a thread worker; candidates run in the verifier's or the
engine's child processes, never here. At the end the best verified candidate is shown as a diff
against the learner's code, with its verified score and the model's own explanation, labelled as
unchecked. Accepting writes a new file; the learner's code is never overwritten.

The budget is wall-clock time for the whole session, the model's replies and the verification
included, so a slow local model spends it fast: the screen counts it down while the session runs.
The loop checks it between rounds, so a reply is never cut off; a round begun runs to its end.

Everything the model wrote (its live reply, its code in the diff, its explanation, its errors) is
shown with control characters escaped (tutor.textsafe), as plain text or Markdown whose links are
not opened, never as markup: a reply is the model's to write, the terminal is not.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, DataTable, Footer, Input, Label, Markdown, Static

from tutor.textsafe import terminal_safe
from ..widgets.keys_in_order import InOrderInput

LIVE_LINES = 6


class OptimiseScreen(Screen):
    DEFAULT_CSS = """
    OptimiseScreen #opt-form { height: auto; padding: 0 1; }
    OptimiseScreen #opt-form Input { width: 12; }
    OptimiseScreen #opt-form Label { padding: 1 1 0 1; }
    OptimiseScreen #opt-status { padding: 0 1; color: $text-muted; height: auto; }
    OptimiseScreen #opt-clock { padding: 0 1; height: auto; }
    OptimiseScreen #opt-rounds { height: 10; }
    OptimiseScreen #opt-live { height: auto; max-height: 8; padding: 0 1; color: $text-muted; }
    OptimiseScreen #opt-result { height: 1fr; }
    OptimiseScreen #opt-actions { height: auto; padding: 0 1; }
    OptimiseScreen #opt-actions Button { margin-right: 2; }
    """
    BINDINGS = [Binding("escape", "cancel_or_close", "Cancel / close"),
                Binding("ctrl+s", "save", "Save as a new file")]

    def __init__(self, target, start_code: str, settings, save_dir: Path, data_root: Path,
                 walkthrough: str | None = None):
        """`walkthrough`: the task's walkthrough (tutor/coach/walkthrough.py) as Markdown, shown under
        the model's explanation once a candidate is verified; None where there is none, or where the
        room keeps worked solutions closed."""
        super().__init__()
        self.target = target
        self.walkthrough = walkthrough
        self.start_code = start_code
        self.settings = settings
        self.save_dir = save_dir
        self.data_root = data_root  # the log goes where log_path_for puts it, as the CLI's does
        self.cancel = threading.Event()
        self.result = None
        self.running = False
        self.saved: Path | None = None
        self._live = ""
        self._budget = None
        self._started = None
        self._round = 0
        self._clock_timer = None

    def compose(self) -> ComposeResult:
        yield Static(f"Optimise {self.target.name} with {self.settings.model}, judged on {self.target.backend}",
                     id="opt-title", markup=False)
        with Horizontal(id="opt-form"):
            yield Label("wall-clock minutes")
            yield InOrderInput(f"{self._default_budget().wall_s / 60:g}", id="opt-minutes", type="number")
            yield Label("rounds")
            yield InOrderInput(str(self._default_budget().rounds), id="opt-rounds-max", type="integer")
            yield Label("stop at")
            yield InOrderInput("", id="opt-target", type="number", placeholder="2.0")
            yield Button("Start", id="opt-start", variant="primary")
        yield Static("Set a budget and start: the minutes are wall time, the model's replies included. Esc cancels "
                     "a run, then closes.", id="opt-status", markup=False)
        yield Static("", id="opt-clock", markup=False)
        yield DataTable(id="opt-rounds", cursor_type="row")
        yield Static("", id="opt-live", markup=False)
        with VerticalScroll(id="opt-result"):
            yield Static("", id="opt-diff")
            yield Markdown("", id="opt-why", open_links=False)
        with Horizontal(id="opt-actions"):
            yield Button("Save as a new file", id="opt-save", disabled=True)
            yield Button("Close", id="opt-close")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#opt-rounds", DataTable)
        table.add_columns("attempt", "seconds")
        self.query_one("#opt-start", Button).focus()

    # -- starting and running ----------------------------------------------------------------------
    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "opt-start":
            self.start()
        elif event.button.id == "opt-save":
            self.action_save()
        elif event.button.id == "opt-close":
            self.action_cancel_or_close()

    def _default_budget(self):
        """The [ai] settings' optimise_wall_time and optimise_rounds, else the optimiser's own."""
        from tutor.coach.optimise import Budget

        s = self.settings
        return Budget(rounds=s.optimise_rounds or Budget.rounds, wall_s=s.optimise_wall_s or Budget.wall_s)

    def budget(self):
        from tutor.coach.optimise import Budget

        default = self._default_budget()

        def number(widget_id, kind, default):
            text = self.query_one(widget_id, Input).value.strip()
            if not text:
                return default
            value = kind(text)
            if value <= 0:
                raise ValueError(f"{widget_id[5:]} must be more than 0")
            return value

        return Budget(rounds=number("#opt-rounds-max", int, default.rounds),
                      wall_s=60 * number("#opt-minutes", float, default.wall_s / 60),
                      target=number("#opt-target", float, None))

    def start(self) -> None:
        if self.running:
            return
        try:
            budget = self.budget()
        except ValueError as e:
            self._status(f"Budget: {e}")
            return
        self.running = True
        self.query_one("#opt-form").disabled = True
        self._status(f"Running: at most {budget.rounds} rounds, {budget.wall_s / 60:g} min of wall time"
                     + (f", stopping at {budget.target:g}x" if budget.target else "") + ". Esc cancels.")
        self._budget, self._started = budget, time.monotonic()
        self._tick()
        self._clock_timer = self.set_interval(1.0, self._tick)
        self._run(budget)

    @work(thread=True, group="optimise", exit_on_error=False)
    def _run(self, budget) -> None:
        from tutor.coach.optimise import log_path_for, optimise

        log = log_path_for(self.target.name, self.data_root)
        try:
            result = optimise(self.target, self.start_code, self.settings, budget, log_path=log, cancel=self.cancel,
                              on_event=lambda kind, data: self.app.call_from_thread(self._event, kind, data))
        except Exception as e:  # one line, never a traceback
            self.app.call_from_thread(self._failed, f"{type(e).__name__}: {e}")
            return
        finally:
            close = getattr(self.target, "close", None)
            if close:
                close()
        self.app.call_from_thread(self._finished, result, log)

    def _event(self, kind: str, data) -> None:
        if kind == "round":
            self._live = ""
            self._round = data
            self._tick()
            self._status(f"Round {data}: asking {self.settings.model} ... (esc cancels)")
        elif kind == "delta":
            self._live += terminal_safe(data)
            lines = self._live.splitlines()[-LIVE_LINES:]
            self.query_one("#opt-live", Static).update("\n".join(lines))
        elif kind == "status":
            self._status(str(data))
        elif kind == "attempt":
            self._add_row(data)

    def _add_row(self, a) -> None:
        """The attempt's line, worded by the optimiser (Attempt.summary_line, as the CLI prints it),
        coloured here by its verdict."""
        style = "green" if a.trusted else "yellow" if a.correct else "red" if a.code is not None else ""
        # A DataTable reads a str cell as markup; Text is shown as it is.
        self.query_one("#opt-rounds", DataTable).add_row(Text(terminal_safe(a.summary_line()), style=style),
                                                         Text(f"{a.latency_s:.1f}"))

    def _tick(self) -> None:
        """The wall time left, counted down while the session runs."""
        if self._budget is None or self._started is None:
            return
        used = time.monotonic() - self._started
        total = _clock(self._budget.wall_s)
        if not self.running:
            text = f"Wall time used: {_clock(used)} of {total}."
        elif used < self._budget.wall_s:
            text = f"Wall time left: {_clock(self._budget.wall_s - used)} of {total} (model replies count too)."
        else:
            text = (f"Wall time is up ({total}): round {self._round or 1} runs to its end, then the session stops.")
        self.query_one("#opt-clock", Static).update(text)

    def _stop_clock(self) -> None:
        if self._clock_timer is not None:
            self._clock_timer.stop()
            self._clock_timer = None
        self._tick()

    def _failed(self, message: str) -> None:
        self.running = False
        self._stop_clock()
        self._status(f"The optimiser stopped: {message}")

    def _finished(self, result, log: Path) -> None:
        from tutor.coach.optimise import EXPLANATION_HEADING, wall_time_spent_text

        self.running = False
        self.result = result
        self._stop_clock()
        lines = result.summary_lines(log)  # worded by the optimiser, as the CLI prints them
        if result.stop_reason == "time":
            lines.insert(1, wall_time_spent_text(self._budget.wall_s, "by opening the optimiser again with more "
                                                                      "minutes"))
        best = result.best
        if best is None:
            self._status("\n".join(lines))
            return
        self._status("\n".join(lines + ["ctrl+s saves it as a new file."]))
        diff = terminal_safe(result.diff())  # the model's code: Syntax draws its characters as they are
        self.query_one("#opt-diff", Static).update(Syntax(diff or "(no change)", "diff", theme="ansi_dark"))
        why = terminal_safe(best.explanation or "(the model gave no explanation)")
        after = "\n\n---\n\n" + self.walkthrough if self.walkthrough else ""
        self.query_one("#opt-why", Markdown).update(f"### {EXPLANATION_HEADING}\n\n" + why + after)
        self.query_one("#opt-save", Button).disabled = False

    def _status(self, text: str) -> None:
        self.query_one("#opt-status", Static).update(terminal_safe(text))

    # -- leaving -----------------------------------------------------------------------------------
    def action_save(self) -> None:
        if self.result is None or self.result.best is None:
            return
        from tutor.coach.optimise import save_new

        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = save_new(self.save_dir / f"{self.target.name}-optimised-{stamp}.py", self.result.best.code)
        self.saved = path
        self.app.notify(f"Saved to {path}. Your own code is unchanged.")

    def action_cancel_or_close(self) -> None:
        if self.running:
            self.cancel.set()
            self._status("Cancelling after the current step ...")
            return
        self.dismiss(self.saved)


def _clock(seconds: float) -> str:
    """The countdown's face, ticking once a second: 2:59, 1:00:00."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class TaskPicker(Screen):
    """Which coaching task to optimise (from its naive baseline)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Back")]

    def __init__(self, tasks: list):
        super().__init__()
        self.tasks = tasks  # coaching_tasks(): the one list the CLI names too

    def compose(self) -> ComposeResult:
        from textual.widgets import OptionList
        from textual.widgets.option_list import Option

        with Vertical():
            yield Label("Optimise a coaching task, starting from its naive kernel:")
            yield OptionList(*[Option(f"{t.name}: {t.title}", id=t.name) for t in self.tasks], id="task-list")
        yield Footer()

    def on_option_list_option_selected(self, event) -> None:
        self.dismiss(event.option.id)
