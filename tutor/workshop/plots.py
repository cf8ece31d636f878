"""Two pictures of a room, where a picture says more than a table: the room's solves over the
workshop's time, and how many learners are where on each puzzle.

A facilitator reads "19 solved by 11:10, then nothing for half an hour" from a line of bars at a
glance, and from a column of time stamps not at all. Both pictures are worked out here once, as
numbers (`solved_over_time`, `learners_per_puzzle`), and drawn twice: as text for the terminal
(below: Unicode blocks, no colour, since the report may go to a projector's terminal or into a file,
and every line inside 80 columns with its axis labelled and its unit said) and as SVG in the HTML
report (tutor.workshop.report_html).

Puzzle ids come from files other people wrote: each is made terminal-safe and one line before it is measured, and
cut short past PUZZLE_WIDTH so that a long one cannot push a bar past the 80th column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import accumulate

from tutor.store import parse_iso_time
from tutor.textsafe import one_line
from .export import LearnerExport
from .live import FAILING, SOLVED, UNTOUCHED, WORKING, puzzle_state

COLUMNS = 80       # a terminal's width: every line of a plot fits in it
MAX_BAR = 40       # columns a bar may take, fewer where its labels and counts need them
MAX_STEPS = 18     # rows of the time plot: a workshop of any length fits on one screen
PUZZLE_WIDTH = 22  # a puzzle's label in a plot (the catalog's longest id); the tables keep the whole id
STEP_MINUTES = (1, 2, 5, 10, 15, 20, 30, 60, 120, 180, 240, 360, 720, 1440)
STATES = (SOLVED, FAILING, WORKING, UNTOUCHED)
SHADES = {SOLVED: "█", FAILING: "▓", WORKING: "▒", UNTOUCHED: "░"}
STATE_WORDS = {SOLVED: "solved", FAILING: "failing (latest run)", WORKING: "working", UNTOUCHED: "not opened"}
_EIGHTHS = " ▏▎▍▌▋▊▉"


@dataclass(frozen=True)
class SolvedOverTime:
    """Puzzles solved by the room in each step of the workshop: from the step holding its first
    stamp (an opening, a run, a key) to the step holding its last."""
    start: float                # the first step's start, a whole number of steps since the epoch (UTC)
    step_s: float
    solved: tuple[int, ...]     # solves in each step
    untimed: int = 0            # solved, with no time of solving kept (a record edited by hand)

    @property
    def so_far(self) -> list[int]:
        return list(accumulate(self.solved))

    def step_start(self, n: int) -> float:
        return self.start + n * self.step_s

    def step_end(self, n: int) -> float:
        return self.start + (n + 1) * self.step_s

    def step_text(self) -> str:
        minutes = self.step_s / 60
        return f"{minutes:g} min" if minutes < 120 else f"{minutes / 60:g} h"


def solved_over_time(learners: list[LearnerExport], puzzles: list[str]) -> SolvedOverTime | None:
    """None where no solve has a time (nothing solved yet, or only records without `solved_at`)."""
    stamps: list[float] = []
    solves: list[float] = []
    untimed = 0
    for e in learners:
        for pid in puzzles:
            p = e.record(pid)
            if p is None:
                continue
            stamps += [t for s in (p.first_opened_at, p.solved_at, p.last_run_at, p.last_active_at)
                       if s and (t := parse_iso_time(s)) is not None]
            if p.solved:
                at = parse_iso_time(p.solved_at) if p.solved_at else None
                if at is None:
                    untimed += 1
                else:
                    solves.append(at)
    if not solves:
        return None
    first, last = min(stamps), max(stamps)
    step = _step(first, last)
    start = math.floor(first / step) * step
    counts = [0] * (int((last - start) // step) + 1)
    for t in solves:
        counts[min(int((t - start) // step), len(counts) - 1)] += 1
    return SolvedOverTime(start, step, tuple(counts), untimed)


def _step(first: float, last: float) -> float:
    """The shortest usual step (5 min, 10 min, 1 h...) that draws the workshop in MAX_STEPS rows."""
    for minutes in STEP_MINUTES:
        step = minutes * 60.0
        if last - math.floor(first / step) * step < MAX_STEPS * step:
            return step
    days = math.ceil((last - first) / 86400 / (MAX_STEPS - 1)) or 1
    return days * 86400.0


def learners_per_puzzle(learners: list[LearnerExport], puzzles: list[str]) -> dict[str, dict[str, int]]:
    """puzzle -> {state: learners in it} for every state of STATES (tutor.workshop.live.puzzle_state)."""
    out = {pid: dict.fromkeys(STATES, 0) for pid in puzzles}
    for e in learners:
        for pid in puzzles:
            out[pid][puzzle_state(e.record(pid))] += 1
    return out


# -- text plots -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    """Whole columns per unit, or whole units per column, so the ruler's ticks fall on columns."""
    top: int
    columns_per_unit: int = 1
    units_per_column: int = 1

    @classmethod
    def fitting(cls, top: int, width: int = MAX_BAR) -> Scale:
        top, width = max(top, 1), max(width, 10)
        if top <= width:
            return cls(top, columns_per_unit=width // top)
        return cls(top, units_per_column=math.ceil(top / width))

    def columns(self, value: float) -> float:
        return value * self.columns_per_unit / self.units_per_column

    @property
    def width(self) -> int:
        return math.ceil(self.columns(self.top))

    def says(self, unit: str, units: str) -> str:
        if self.columns_per_unit > 1:
            return f"1 {unit} = {self.columns_per_unit} columns"
        return f"1 column = {self.units_per_column} {unit if self.units_per_column == 1 else units}"


def over_time_text(series: SolvedOverTime | None, untimed_only: int = 0) -> list[str]:
    """The room's solves so far at the end of each step, as bars; time runs down the page."""
    if series is None:
        why = (f"{untimed_only} solve(s), none with a time kept" if untimed_only else "no puzzle solved yet")
        return ["Progress over time: " + why]
    so_far = series.so_far
    when = clock_format(series.start, series.step_end(len(so_far) - 1))
    labels = [clock_text(series.step_end(n), when) for n in range(len(so_far))]
    pad = max(len(label) for label in labels + ["by (UTC)"])
    after = 2 + 2 * len(str(so_far[-1])) + 4  # "  119 (+12)"
    scale = Scale.fitting(so_far[-1], min(MAX_BAR, COLUMNS - (2 + pad + 2 + 1) - after))
    lines = [f"Progress over time: puzzles solved by the room so far, every {series.step_text()}", "  by (UTC)"]
    for label, total, new in zip(labels, so_far, series.solved):
        bar = _bar(scale.columns(total))
        lines.append(f"  {label:<{pad}}  │{bar:<{scale.width}}  {total}" + (f" (+{new})" if new else ""))
    lines += _ruler(scale, indent=2 + pad + 2)
    lines.append(" " * (2 + pad + 2) + f"puzzles solved so far ({scale.says('puzzle', 'puzzles')})")
    if series.untimed:
        lines.append(f"  {series.untimed} solve(s) have no time kept and are left out of the bars")
    return lines


def per_puzzle_text(counts: dict[str, dict[str, int]], learners: int) -> list[str]:
    """One stacked bar per puzzle: learners solved, failing, working, not opened; each count after it."""
    labels = {pid: cut(one_line(pid), PUZZLE_WIDTH) for pid in counts}
    pad = max([len("puzzle"), *map(len, labels.values())])
    digits = max(2, len(str(learners)))
    scale = Scale.fitting(learners, min(MAX_BAR, COLUMNS - (2 + pad + 2 + 1) - (2 + 4 * digits + 3)))
    lines = ["Learners per puzzle: " + "  ".join(f"{SHADES[s]} {STATE_WORDS[s]}" for s in STATES),
             f"  {'puzzle':<{pad}}   {'':<{scale.width}}  " + " ".join(f"{SHADES[s]:>{digits}}" for s in STATES)]
    for pid, by_state in counts.items():
        bar = _stacked(scale, [by_state[s] for s in STATES])
        lines.append(f"  {labels[pid]:<{pad}}  │{bar:<{scale.width}}  "
                     + " ".join(f"{by_state[s]:>{digits}}" for s in STATES))
    lines += _ruler(scale, indent=2 + pad + 2)
    lines.append(" " * (2 + pad + 2) + f"learners ({scale.says('learner', 'learners')})")
    return lines


def _bar(columns: float) -> str:
    eighths = round(columns * 8)
    return "█" * (eighths // 8) + (_EIGHTHS[eighths % 8] if eighths % 8 else "")


def _stacked(scale: Scale, values: list[int]) -> str:
    """Each state's share in whole columns (largest remainders), in its shade."""
    exact = [scale.columns(v) for v in values]
    whole = [math.floor(x) for x in exact]
    for i in sorted(range(len(exact)), key=lambda i: whole[i] - exact[i])[:round(sum(exact)) - sum(whole)]:
        whole[i] += 1
    return "".join(SHADES[s] * n for s, n in zip(STATES, whole))


def _ruler(scale: Scale, indent: int) -> list[str]:
    """The value axis under the bars: └ at 0, ┴ at each tick (under a bar's last column), the
    values below, right-aligned on their ticks."""
    room = len(str(scale.top)) + 2
    tick = next(t for t in nice_steps() if scale.columns(t) >= max(room, 4))
    axis = ["─"] * (scale.width + 1)
    axis[0] = "└"
    numbers = [" "] * (scale.width + len(str(scale.top)) + 2)
    numbers[0] = "0"
    value = tick
    while value <= scale.top:
        at = round(scale.columns(value))
        axis[at] = "┴"
        text = str(value)
        numbers[at - len(text) + 1:at + 1] = text
        value += tick
    return [" " * indent + "".join(axis), " " * indent + "".join(numbers).rstrip()]


def nice_steps():
    """1, 2, 5, 10, 20, 50...: the steps of an axis's ticks."""
    n = 1
    while True:
        for f in (1, 2, 5):
            yield f * n
        n *= 10


def clock_format(first: float, last: float) -> str:
    a, b = _utc(first), _utc(last)
    if a is None or b is None or a.year != b.year:
        return "%Y-%m-%d %H:%M"
    return "%H:%M" if a.date() == b.date() else "%m-%d %H:%M"


def clock_text(t: float, fmt: str) -> str:
    moment = _utc(t)
    return "?" if moment is None else moment.strftime(fmt)


def _utc(t: float) -> datetime | None:
    try:
        return datetime.fromtimestamp(t, timezone.utc)
    except (OverflowError, ValueError, OSError):
        return None


def cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"
