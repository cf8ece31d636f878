"""The memory beside the grid: what each array held after the phase on show, and who touched it.

A learner debugging a kernel asks "what did my thread read, what did it write, and what did the
others do to the same cells?" — so each cell is coloured by its relation to the selected thread in
this phase, and wrong output cells say "expected/got" once the launch is over (earlier phases show
the value the cell held then, since a cell may be written in a later phase). Only the selected
thread's block's shared memory is listed: a launch of hundreds of blocks has hundreds of shared
arrays, and the other blocks' copies say nothing about the thread being looked at.

Large arrays show a window around the cells the selected thread touched (or the first wrong cell),
so a 64x64 output stays a screenful. Lines are built once per show() and cropped per frame (Line
API), so scrolling and phase steps stay cheap.
"""

from __future__ import annotations

import math


from ...engine.views.gridmodel import (OTHERS, READ_BY_SELECTED, UNTOUCHED, WRITTEN_BY_SELECTED, ArrayModel,
                                 GridModel, fmt_value)
from ...engine.trace import fmt_dim
from .styled_lines import StyledLines
from tutor.lazy import lazy

np = lazy("numpy", globals(), "np")  # the app starts before numpy loads

MAX_CELLS_1D = 128  # a longer 1-D array shows this many cells around the focus
MAX_ROWS_2D = 16
MAX_COLS_2D = 12
MAX_CELL_WIDTH = 13

_MARK_CLASS = {
    UNTOUCHED: "arrayview--untouched",
    OTHERS: "arrayview--others",
    READ_BY_SELECTED: "arrayview--read",
    WRITTEN_BY_SELECTED: "arrayview--written",
}


class ArrayView(StyledLines, can_focus=True):
    """Inputs, the selected block's shared memory and the output, at one phase."""

    COMPONENT_CLASSES = {
        "arrayview--title",
        "arrayview--index",
        "arrayview--note",
        "arrayview--untouched",
        "arrayview--others",
        "arrayview--read",
        "arrayview--written",
        "arrayview--wrong",
    }

    DEFAULT_CSS = """
    ArrayView {
        background: $surface;
        height: 1fr;
    }
    ArrayView > .arrayview--title { color: $text; text-style: bold; }
    ArrayView > .arrayview--index { color: $text-muted; }
    ArrayView > .arrayview--note { color: $text-muted; text-style: italic; }
    ArrayView > .arrayview--untouched { color: $text-muted; }
    ArrayView > .arrayview--others { color: $text; background: $foreground 12%; }
    ArrayView > .arrayview--read { color: $text; background: $primary 45%; }
    ArrayView > .arrayview--written { color: $text; background: $success 45%; text-style: bold; }
    ArrayView > .arrayview--wrong { color: $error; text-style: bold reverse; }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self.model: GridModel | None = None
        self.phase = 0
        self.selected: int | None = None
        self._built_width = -1

    def show(self, model: GridModel | None, phase: int = 0, selected_tid: int | None = None) -> None:
        """Show the arrays after `phase` of `model`, coloured for the thread `selected_tid`."""
        self.model = model
        self.phase = phase
        self.selected = selected_tid
        self._rebuild()

    # -- building ---------------------------------------------------------------------------------
    def on_resize(self, event) -> None:
        if self._width_for_layout() != self._built_width:
            self._rebuild()

    def _width_for_layout(self) -> int:
        return max(self.room(), 20)

    def _rebuild(self) -> None:
        self._lines = []
        self._strips.clear()
        self._built_width = self._width_for_layout()
        m = self.model
        if m is None:
            self._lines.append([("no launch to show", "arrayview--note")])
        else:
            self._legend()
            arrays = m.inputs()
            if self.selected is not None:
                block, _ = m.where(self.selected)
                arrays = arrays + m.shared_of(block) + m.locals_of(self.selected)
            if m.output is not None:
                arrays = arrays + [m.output]
            for info in arrays:
                self._lines.append([])
                self._array(info)
        self.set_lines(self._lines)

    def _legend(self) -> None:
        who = "this thread"
        if self.selected is not None:
            block, thread = self.model.where(self.selected)
            who = f"thread {fmt_dim(thread)}"
        last = self.phase >= self.model.n_phases - 1
        when = "at the end" if last else f"after phase {self.phase}"
        self._lines.append([(f"memory {when}", "arrayview--title")])
        dot = [("·", "arrayview--note")]
        keys = [[(f"{who}:", "arrayview--note")], [(" read ", "arrayview--read")],
                [(" written ", "arrayview--written")], dot, [(" others ", "arrayview--others")]]
        if last and self.model.wrong_cells:  # one key, so `exp/got` and its meaning stay together
            keys += [dot, [("exp/got", "arrayview--wrong"), (" = expected/got", "arrayview--note")]]
        # As many keys on a row as fit the pane: a cut legend leaves `6/-4` unexplained. A row
        # neither starts nor ends on a separator.
        width, row = self._built_width, []
        for key in keys:
            joined = row + [(" ", None)] + key if row else key
            if row and sum(len(t) for t, _ in joined) > width:
                self._lines.append(row[:-2] if row[-1] == dot[0] else row)
                joined = [] if key is dot else key
            row = joined
        self._lines.append(row)

    def _array(self, info: ArrayModel) -> None:
        m = self.model
        values = m.values_after(info.aid, self.phase)
        marks = m.cell_marks(info.aid, self.phase, self.selected)
        wrong = m.wrong_cells if (info.role == "output" and self.phase >= m.n_phases - 1) else {}
        shape = info.shape or (1,)
        self._lines.append([(info.label, "arrayview--title"),
                            (f"  {fmt_dim(tuple(shape))}", "arrayview--index")])
        focus = self._focus(info, marks, wrong)

        def text(flat: int) -> tuple[str, str]:
            cell = wrong.get(flat)
            if cell is not None:
                return cell.text()[:MAX_CELL_WIDTH], "arrayview--wrong"
            return fmt_value(values[flat], True)[:MAX_CELL_WIDTH], _MARK_CLASS[marks[flat]]

        if len(shape) == 1:
            self._vector(shape[0], focus, text)
        else:
            rows = math.prod(shape[:-1])
            self._matrix(info, rows, shape[-1], focus, text)

    def _focus(self, info: ArrayModel, marks: list, wrong: dict) -> int:
        """The cell a window of a large array is centred on."""
        for want in (WRITTEN_BY_SELECTED, READ_BY_SELECTED):
            try:
                return marks.index(want)
            except ValueError:
                pass
        if wrong:
            return next(iter(wrong))
        if self.selected is not None:  # an out-of-bounds access: the nearest cell inside
            for ev in self.model.events_of(self.selected):
                if ev.aid == info.aid and ev.out_of_bounds and len(ev.index) == len(info.shape):
                    inside = tuple(max(0, min(int(i), s - 1)) for i, s in zip(ev.index, info.shape))
                    return int(np.ravel_multi_index(inside, info.shape))
        return 0

    def _vector(self, n: int, focus: int, text) -> None:
        lo, hi = 0, n
        if n > MAX_CELLS_1D:
            lo = max(0, min(focus - MAX_CELLS_1D // 4, n - MAX_CELLS_1D))
            hi = lo + MAX_CELLS_1D
        cells = [text(i) for i in range(lo, hi)]
        w = max(2, max((len(t) for t, _ in cells), default=1))
        label_w = len(str(n - 1)) + 2
        per_line = max(1, (self._built_width - label_w - 1) // (w + 1))
        if lo:
            self._lines.append([(f"  … {lo} cells before", "arrayview--note")])
        for start in range(0, len(cells), per_line):
            line = [(f"[{lo + start}]".rjust(label_w) + " ", "arrayview--index")]
            for n_cell, (t, comp) in enumerate(cells[start:start + per_line]):
                if n_cell:
                    line.append((" ", None))
                line.append((t.rjust(w), comp))
            self._lines.append(line)
        if hi < n:
            self._lines.append([(f"  … {n - hi} more cells", "arrayview--note")])

    def _matrix(self, info: ArrayModel, rows: int, cols: int, focus: int, text) -> None:
        frow, fcol = divmod(focus, cols)
        r0 = max(0, min(frow - MAX_ROWS_2D // 4, rows - MAX_ROWS_2D)) if rows > MAX_ROWS_2D else 0
        c0 = max(0, min(fcol - MAX_COLS_2D // 4, cols - MAX_COLS_2D)) if cols > MAX_COLS_2D else 0
        r1, c1 = min(rows, r0 + MAX_ROWS_2D), min(cols, c0 + MAX_COLS_2D)
        grid = [[text(r * cols + c) for c in range(c0, c1)] for r in range(r0, r1)]
        w = max([2, len(str(c1 - 1))] + [len(t) for row in grid for t, _ in row])
        shape = info.shape
        labels = [fmt_row(shape, r) for r in range(r0, r1)]
        label_w = max(len(s) for s in labels) + 1
        fit = max(1, (self._built_width - label_w + 1) // (w + 1))  # the columns the pane holds whole
        if c1 - c0 > fit:  # a narrower window, still around the focus
            c0 = max(0, min(fcol - fit // 4, cols - fit))
            c1 = c0 + fit
            grid = [[text(r * cols + c) for c in range(c0, c1)] for r in range(r0, r1)]
        if r0 or c0 or r1 < rows or c1 < cols:
            self._lines.append([(f"  rows {r0}–{r1 - 1} of {rows}, columns {c0}–{c1 - 1} of {cols}",
                                 "arrayview--note")])
        header = [(" " * label_w, None)]
        for c in range(c0, c1):
            header.append((str(c).rjust(w) + (" " if c < c1 - 1 else ""), "arrayview--index"))
        self._lines.append(header)
        for label, row in zip(labels, grid):
            line = [(label.rjust(label_w - 1) + " ", "arrayview--index")]
            for n_cell, (t, comp) in enumerate(row):
                if n_cell:
                    line.append((" ", None))
                line.append((t.rjust(w), comp))
            self._lines.append(line)



def fmt_row(shape: tuple, row: int) -> str:
    """A matrix row's label: its leading index (or indices, for arrays of three or more dims)."""
    lead = shape[:-1]
    idx = []
    for s in reversed(lead):
        idx.append(row % s)
        row //= s
    return ",".join(str(i) for i in reversed(idx))


__all__ = ["ArrayView"]
