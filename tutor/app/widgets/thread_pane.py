"""The thread pane: the grid, the memory and one thread's accesses, kept in step.

A check runs several configs, and a kernel usually goes wrong in only some of them, so the pane
opens on the first failing config and lets the learner flip through the others with "," and ".".
The grid owns the selection and the phase; the pane only listens to its messages and hands the
same (model, phase, thread) to the memory and detail views, so the three can never disagree.
Models are built on first view of a config: building one walks the trace once, and a learner may
never look at most configs. The same holds for the counts of a trace, which the counters view
draws its lines and roofline from (/). Whenever the config on show changes, the pane says so
(CountsShown), so the editor can mark that config's costly lines.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Static

from ...engine.views.gridmodel import STATUS_TITLES, GridModel, build
from ...engine.trace import fmt_dim
from .arrays import ArrayView
from .counters_view import CountersView
from .grid import ThreadGrid
from .thread_detail import ThreadDetail


CONFIG_KEYS = Binding.Group("config", compact=True)  # ", ." in the footer: the app's keys fit beside
PANE_KEYS = ", . config   [ ] phase   space play   / counters"
EMPTY = ("No run to show yet. Press ctrl+r: each thread of the launch appears here as a cell, with "
         "what it read and wrote, and the memory after each barrier.")


class ThreadPane(Vertical):
    """Grid, arrays and thread detail for a list of ConfigRuns, with a header line (wrapped when the pane is narrow)."""

    BINDINGS = [
        Binding("comma", "config(-1)", "previous config", group=CONFIG_KEYS),
        Binding("full_stop", "config(1)", "next config", group=CONFIG_KEYS),
        Binding("slash", "counters", "counters",  # no letter: see tutor.app.keys
                tooltip="The config's memory counters, or the grid again"),
    ]

    DEFAULT_CSS = """
    ThreadPane {
        height: 1fr;
    }
    ThreadPane > #thread-pane-header {
        height: auto;
        max-height: 3;
        padding: 0 1;
        background: $panel;
        color: $text;
    }
    ThreadPane > #thread-pane-body {
        height: 1fr;
    }
    ThreadPane ThreadGrid {
        width: 1fr;
        border-right: vkey $foreground 10%;
    }
    ThreadPane #thread-pane-side {
        width: 1fr;
    }
    ThreadPane ArrayView {
        height: 1fr;
        border-bottom: hkey $foreground 10%;
    }
    ThreadPane ThreadDetail {
        height: 1fr;
    }
    ThreadPane.-empty > #thread-pane-header {
        height: auto;
        max-height: initial;  /* the note is read whole, however narrow the pane */
        background: $surface;
        color: $text-muted;
    }
    ThreadPane.-empty > #thread-pane-body {
        display: none;
    }
    ThreadPane CountersView {
        display: none;
        width: 1fr;
    }
    ThreadPane.-counters CountersView {
        display: block;
    }
    ThreadPane.-counters ThreadGrid, ThreadPane.-counters #thread-pane-side {
        display: none;
    }
    ThreadPane.-narrow > #thread-pane-body {
        layout: vertical;
    }
    ThreadPane.-narrow ThreadGrid {
        width: 1fr;
        height: auto;
        max-height: 45%;
        border-right: none;
        border-bottom: hkey $foreground 10%;
    }
    ThreadPane.-narrow #thread-pane-side {
        width: 1fr;
        height: 1fr;
    }
    """

    NARROW = 80  # below this width the grid sits above the arrays rather than beside them

    class CountsShown(Message):
        """The config on show changed: its verdict counters (ConfigResult.counters, or None when
        no run is shown), the code that ran, and which config of how many it is."""

        def __init__(self, counters, source: str, index: int, total: int):
            super().__init__()
            self.counters = counters
            self.source = source
            self.index = index
            self.total = total

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self.runs: list = []
        self.config_index = 0
        self._models: dict[int, GridModel | None] = {}
        self._synced: tuple | None = None
        self._pending: tuple | None = None
        self.counters: list = []  # per config: the verdict's memory counters (ConfigResult.counters)
        self.flops: list = []     # per config: the puzzle's declared FLOPs (None: not declared)
        self.source = ""
        self.source_lines: list[str] = []
        self._counted: dict = {}  # per config: the Counters of its trace (None: no trace kept)

    def compose(self) -> ComposeResult:
        yield Static(id="thread-pane-header")
        with Horizontal(id="thread-pane-body"):
            yield ThreadGrid(id="thread-grid")
            with Vertical(id="thread-pane-side"):
                yield ArrayView(id="thread-arrays")
                yield ThreadDetail(id="thread-detail")
            yield CountersView(id="thread-pane-lens")

    def on_resize(self, event) -> None:
        self.set_class(event.size.width < self.NARROW, "-narrow")
        self._header()

    def on_mount(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.show_runs(*pending)
        else:
            self._header()

    # -- public API -------------------------------------------------------------------------------
    @property
    def grid(self) -> ThreadGrid:
        return self.query_one(ThreadGrid)

    @property
    def arrays(self) -> ArrayView:
        return self.query_one(ArrayView)

    @property
    def detail(self) -> ThreadDetail:
        return self.query_one(ThreadDetail)

    @property
    def model(self) -> GridModel | None:
        """The shown config's model (None when no run is shown or the run kept no trace)."""
        return self._model(self.config_index) if self.runs else None

    def show_runs(self, runs: list, counters: list | None = None, source: str = "",
                  flops: list | None = None) -> None:
        """Show a check's runs, opening on the first failing config (else the first). `counters`:
        the verdict's memory counters per config, in the runs' order; `source`: the code they ran;
        `flops`: the puzzle's FLOPs per config, for the roofline."""
        if not self.is_mounted:
            self._pending = (list(runs), counters, source, flops)
            return
        self.runs = list(runs)
        self.counters = list(counters or [])
        self.flops = list(flops or [])
        self.source = source
        self.source_lines = source.splitlines()
        self._models = {}
        self._counted = {}
        first = next((i for i, r in enumerate(self.runs) if r.failures), 0)
        self.show_config(first)

    def show_config(self, index: int) -> None:
        """Switch to config number `index` (0-based) of the runs shown."""
        if not self.runs:
            self.config_index = 0
            self.grid.show(None)
        else:
            self.config_index = max(0, min(index, len(self.runs) - 1))
            self.grid.show(self._model(self.config_index))
        self._sync()
        i = self.config_index
        self.post_message(self.CountsShown(self.counters[i] if self.runs and i < len(self.counters) else None,
                                           self.source, i, len(self.runs)))

    def select(self, block, thread, config: str | None = None) -> None:
        """Select a thread, e.g. the one a failure names; `config` (a config's name) switches to
        that config first."""
        if config is not None:
            for i, run in enumerate(self.runs):
                if getattr(run.config, "name", None) == config:
                    if i != self.config_index:
                        self.show_config(i)
                    break
        if block is None or thread is None:
            return
        self.grid.select(tuple(block), tuple(thread))
        self._sync()

    def action_config(self, delta: int) -> None:
        if self.runs:
            self.show_config((self.config_index + delta) % len(self.runs))

    def action_counters(self) -> None:
        """Between the grid and the shown config's memory counters. The view shown takes the focus,
        so the pane's keys stay the pane's (a hidden grid would hand the focus to the editor)."""
        if self.runs:
            self.toggle_class("-counters")
            self._sync()
            if self.has_class("-counters"):
                self.query_one(CountersView).focus_lines()
            else:
                self.grid.focus()

    # -- wiring -----------------------------------------------------------------------------------
    # The grid's messages go on bubbling: the app may follow the selection too (e.g. to the editor).
    def on_thread_grid_thread_selected(self, message: ThreadGrid.ThreadSelected) -> None:
        self._sync()

    def on_thread_grid_phase_changed(self, message: ThreadGrid.PhaseChanged) -> None:
        self._sync()

    def _model(self, index: int) -> GridModel | None:
        if index not in self._models:
            run = self.runs[index]
            self._models[index] = build(run) if getattr(run, "trace", None) is not None else None
        return self._models[index]

    def _sync(self) -> None:
        grid = self.grid
        model = grid.model
        key = (model, grid.phase, grid.selected)
        if key != self._synced:
            self._synced = key
            self.arrays.show(model, grid.phase, grid.selected)
            self.detail.show(model, grid.selected, grid.phase)
        if self.has_class("-counters") and self.runs:
            i = self.config_index
            trace = getattr(self.runs[i], "trace", None)
            self.query_one(CountersView).show(self.counters[i] if i < len(self.counters) else None, self.source,
                                              trace, self._counts(i), self.flops[i] if i < len(self.flops) else None)
        self._header()

    def _counts(self, index: int):
        """The Counters of config `index`'s trace, counted on first view (None: no trace kept)."""
        if index not in self._counted:
            trace = getattr(self.runs[index], "trace", None)
            if trace is None:
                self._counted[index] = None
            else:
                from ...engine.analysis.counters import count

                self._counted[index] = count(trace, self.source)
        return self._counted[index]

    def _header(self) -> None:
        header = self.query_one("#thread-pane-header", Static)
        self.set_class(not self.runs, "-empty")
        if not self.runs:  # one line that says what will be here, not three empty views
            header.update(Text(EMPTY))
            return
        narrow = self.has_class("-narrow")
        run = self.runs[self.config_index]
        name = getattr(run.config, "name", "") or ""
        n = f"{self.config_index + 1}/{len(self.runs)}" if narrow else \
            f"config {self.config_index + 1} of {len(self.runs)}:"
        parts = [f"{n} {name}"]
        model = self.grid.model
        if model is None:
            parts.append("no trace kept for this config")
        else:
            phase = self.grid.phase
            parts.append(f"phase {phase}/{max(0, model.n_phases - 1)}")
            tid = self.grid.selected
            if tid is not None:
                block, thread = model.where(tid)
                if narrow:
                    parts.append(f"t{fmt_dim(thread)} b{fmt_dim(block)}")
                else:
                    parts.append(f"thread {fmt_dim(thread)} of block {fmt_dim(block)}")
                    parts.append(STATUS_TITLES[model.status(tid)])
        # A narrow pane wraps the header rather than cut the phase; a wide one adds the pane's keys,
        # on a line of their own where one line holds not both (a key is never split from its word).
        text = Text(" · ".join(parts))
        if not narrow:
            gap = "    " if len(text) + len(PANE_KEYS) + 4 <= header.content_region.width else "\n"
            text.append(gap + PANE_KEYS, style="dim")
        header.update(text)


__all__ = ["CountersView", "ThreadPane"]
