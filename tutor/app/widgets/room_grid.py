"""The room's learners by its puzzles, one row a learner, for the facilitator (`gpu-tutor room`).

Each cell says in a glance and a word where a learner is on a puzzle: ✓ solved (with the active
time it took), ✗ failing (the latest failure's kind, shortened, and the time so far), … working
(opened, no failing run last), · not opened. The learner's column stays put while the puzzles
scroll sideways, so a wide workshop is never cut, only scrolled. The table is rebuilt only when
what it shows changed, and keeps the facilitator's place (the row under the cursor, the scroll)
when it is: it is read again every second.

Every name and id here comes from a learner's folder or an export someone else wrote: each goes in
as plain Text, made terminal-safe and one line, never as markup (a column's heading too).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.columns import Columns
from rich.style import Style
from rich.text import Text
from textual.widgets import DataTable

from tutor.textsafe import one_line
from tutor.workshop.live import FAILING, SOLVED, UNTOUCHED, WORKING, Cell, RoomPicture, Row

LABEL_MAX = 24  # a learner's name in the grid at most (the misconception screen shows it whole)
# the theme's colours for text (its variables, never hex of our own); MUTED is dim text
MUTED = "muted"
MARKS = {SOLVED: ("✓", "text-success"), FAILING: ("✗", "text-error"), WORKING: ("…", "text-warning"),
         UNTOUCHED: ("·", MUTED)}
MARKS_SHOWN = {mark for mark, _ in MARKS.values()}
# a failure kind in a word (tutor.engine.verdict.KINDS); an unknown one is shown cut to 9
SHORT_KINDS = {
    "compile_error": "compile", "static": "rejected", "unsupported": "unsupp.", "runtime_error": "error",
    "timeout": "timeout", "implausible": "implaus.", "out_of_bounds": "bounds", "barrier_divergence": "diverge",
    "race": "race", "uninitialized_read": "uninit", "budget_exceeded": "budget", "input_mutated": "mutated",
    "wrong_shape": "shape", "not_finite": "nan/inf", "wrong_output": "wrong", "nondeterministic": "nondet.",
    "technique_missing": "technique", "perf_target": "perf",
}
LEGEND = [("✓", "text-success", "solved (time it took)"), ("✗", "text-error", "failing: latest failure"),
          ("…", "text-warning", "working (time so far)"), ("·", MUTED, "not opened"),
          ("idle:", "text-warning", "no run for 10 min"), ("Stuck:", None, "time on the puzzle open")]


def duration(seconds: float | None) -> str:
    """Active time as a facilitator reads it at a glance: <1m, 12m, 1h05."""
    if seconds is None:
        return ""
    minutes = int(seconds // 60)
    if minutes < 1:
        return "<1m"
    return f"{minutes}m" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}"


def short_kind(kind: str | None) -> str:
    if not kind:
        return "failing"
    return SHORT_KINDS.get(kind, one_line(kind)[:9])


def label_of(row: Row) -> str:
    label = one_line(row.label)
    return label if len(label) <= LABEL_MAX else label[:LABEL_MAX - 1] + "…"


class LearnerGrid(DataTable):
    DEFAULT_CSS = """
    LearnerGrid {
        height: 1fr;
    }
    """

    def __init__(self, **kwargs):
        super().__init__(cursor_type="row", zebra_stripes=True, fixed_columns=1, **kwargs)
        self._shown: tuple | None = None
        self._last: tuple | None = None  # (picture, sort) on show
        self.compact = False  # cells without their times: the width holds no more

    def on_resize(self) -> None:
        if self._last is not None:
            self.show(*self._last)

    def show(self, picture: RoomPicture, sort: str) -> None:
        """The picture's learners in `sort`'s order ("progress", "stuck", "name"). Where the cells with
        their times would not fit the width, they go without (the Stuck column keeps the time on the
        puzzle each learner is on), so a room of four puzzles is whole in 80 columns."""
        self._last = (picture, sort)
        rows = picture.sorted_rows(sort)
        cells = tuple(self._row_cells(r, picture.puzzles, times=True) for r in rows)
        self.compact = _width(picture.puzzles, cells) > self.size.width > 0
        if self.compact:
            cells = tuple(self._row_cells(r, picture.puzzles, times=False) for r in rows)
        content = (tuple(picture.puzzles), cells)
        if content == self._shown:
            return
        kept = self._place()
        self._shown = content
        self.clear(columns=True)
        self.add_column("Learner", key="learner")
        for pid in picture.puzzles:  # a heading given as a str is read as markup: "[/]" in an export's id crashed it
            self.add_column(Text(one_line(pid), no_wrap=True, end=""), key=f"puzzle:{pid}")
        self.add_column("Solved", key="solved")
        self.add_column("Stuck", key="stuck")
        colours = self.app.get_css_variables()
        for row, cells in zip(rows, content[1]):
            self.add_row(*(self._styled(text, colour, colours) for text, colour in cells), key=row.id)
        self._restore(kept)

    def row_ids(self) -> list[str]:
        """The learners' ids in the order on show (for tests and the misconception screen)."""
        return [key.value for key in self.rows]

    def cell_text(self, learner_id: str, puzzle: str) -> str:
        return str(self.get_cell(learner_id, f"puzzle:{puzzle}"))

    def _row_cells(self, row: Row, puzzles: list[str], times: bool) -> tuple:
        out = [(label_of(row), None)]
        for pid in puzzles:
            out.append(_cell(row.cells.get(pid) or Cell(UNTOUCHED, None), times))
        out.append((f"{row.solved}/{len(puzzles)}", None))
        stuck = duration(row.stuck_s) if row.stuck_s else ""
        out.append(((stuck + " idle").strip() if row.idle else stuck, "text-warning" if row.idle else None))
        return tuple(out)

    @staticmethod
    def _styled(text: str, colour: str | None, colours: dict[str, str]) -> Text:
        return Text(text, style=style_of(colour, colours), no_wrap=True, end="")

    def _place(self) -> tuple:
        """Where the facilitator is: the learner under the cursor and the scroll."""
        learner = None
        if self.row_count and 0 <= self.cursor_row < self.row_count:
            learner = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return learner, self.cursor_column, self.scroll_x, self.scroll_y

    def _restore(self, kept: tuple) -> None:
        learner, column, x, y = kept
        if learner is not None and learner in self.rows:
            self.move_cursor(row=self.get_row_index(learner), column=column, animate=False, scroll=False)
        self.scroll_to(x, y, animate=False, immediate=True)


def _width(puzzles: list[str], rows: tuple) -> int:
    """The columns the table takes: each column's widest cell or heading, a cell of padding either
    side, and the vertical scrollbar's two."""
    headings = ["Learner", *puzzles, "Solved", "Stuck"]
    widths = [cell_len(one_line(h)) for h in headings]
    for row in rows:
        widths = [max(w, cell_len(text)) for w, (text, _) in zip(widths, row)]
    return sum(w + 2 for w in widths) + 2


def _cell(cell: Cell, times: bool = True) -> tuple[str, str | None]:
    mark, colour = MARKS.get(cell.state, ("?", None))
    time = duration(cell.active_s) if times else ""
    if cell.state == FAILING:
        kind = short_kind((cell.failure or {}).get("kind") if isinstance(cell.failure, dict) else None)
        return " ".join(p for p in (mark, kind, time) if p), colour
    if cell.state == UNTOUCHED:
        return mark, colour
    return " ".join(p for p in (mark, time) if p), colour


def style_of(colour: str | None, colours: dict[str, str], bold: bool = False) -> Style:
    """A theme variable's colour as a Rich style (`colours`: App.get_css_variables())."""
    if colour == MUTED:
        return Style(dim=True, bold=bold)
    value = colours.get(colour) if colour else None
    return Style(color=value, bold=bold) if value else Style(bold=bold)


def legend(colours: dict[str, str], compact: bool = False) -> Columns:
    """The marks in words, laid out in columns, so that a narrow screen wraps between two entries
    and never inside one. `compact`: the cells go without their times (LearnerGrid.compact)."""
    items = []
    for mark, colour, words in LEGEND:
        if compact and mark in MARKS_SHOWN:
            words = words.split(" (")[0]
        items.append(Text.assemble((mark, style_of(colour, colours, bold=True)), f" {words}", end=""))
    return Columns(items, padding=(0, 3))
