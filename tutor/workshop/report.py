"""The facilitator's view of a room: who is where, which puzzles hold people up, who leans on hints,
which mistakes the room shares.

`gpu-tutor report FILES...` reads the learners' exports (see tutor.workshop.export), prints short
tables and two text plots (tutor.workshop.plots), and writes a CSV with one row per learner and
puzzle for a spreadsheet, beside it two more (the misconceptions, the solves over time), and with
--html one page holding all of it (tutor.workshop.report_html). A file that is bad
or cut short is named and skipped; the table is made from the rest, because in a room of thirty
one broken USB copy must not cost the facilitator the whole picture. The same learner exporting
twice counts once (their newer export).

"Holds people up" is the median *active* time learners have spent on a puzzle (tutor.activity:
time in the app with keys, edits or runs on it, idle gaps over five minutes left out): to the
solution for those who solved it, and so far for those who have not, since the puzzle that nobody
has solved yet is exactly the one a facilitator needs to see. Wall-clock time since opening would
rank a puzzle passed through in seconds, then left open, as the longest hold-up. "Still on it"
counts learners on the puzzle now: unsolved, open last, active on it in the last 15 minutes, and
their app not closed since (a closed browser tab is not still on it).

Every name, title and id in the tables comes from a file someone else wrote, so each is made
terminal-safe and one line (tutor.textsafe.one_line) before the columns are measured: an escape or a
zero-width space is shown, a newline cannot start a row of its own, and the table still lines up.
The CSV keeps the text as it was, for a spreadsheet.

The misconceptions are the room's latest failures grouped by mistake, largest first
(tutor.workshop.misconceptions): for each learner and unsolved puzzle whose latest run failed, the
summary the app kept of that failure (PuzzleProgress.last_failure). An export from a gpu-tutor that
kept none still reads, and adds no misconception: a failure is never guessed from a count of runs.

`--seats` puts "seat 1", "seat 2"... in place of each learner's name, in the terminal, the CSVs and
the HTML alike, and leaves their ids out too (an id is one look-up from a name for whoever holds the
exports): a report to put on a projector or send on. Seats are numbered in the order the learners
are read (a served room's folders by name, which `serve` makes from a hash of the learner's id;
export files in the order given), as the live view numbers them when it opens (tutor.workshop.live),
so the same files give the same seats. Paths of skipped files stay in the notes on stderr: they are
the facilitator's own. An export written with --with-code carries the learner's code; no output of
the report ever shows it, with or without --seats.
"""

from __future__ import annotations

import csv
import io
import re
import statistics
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from tutor.activity import IDLE_GAP_S, STILL_ON_IT_S
from tutor.store import iso_time
from tutor.textsafe import one_line
from .export import BadExport, LearnerExport, utc_text
from .live import FAILING, puzzle_state
from .misconceptions import Misconception, clusters
from .plots import (COLUMNS, PUZZLE_WIDTH, SolvedOverTime, cut, learners_per_puzzle, over_time_text,
                    per_puzzle_text, solved_over_time)

LEGEND = "progress: # solved, o opened, . not yet"


@dataclass
class ClassReport:
    learners: list[LearnerExport]
    puzzles: list[str]
    title: str | None
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # (file, why)
    notes: list[str] = field(default_factory=list)
    seats: dict[str, int] | None = None  # learner id -> seat number, where names are hidden (--seats)

    def label(self, e: LearnerExport) -> str:
        """What the report calls a learner: their name or id (cut to MAX_LABEL: an export's name is
        whatever was typed into the file, megabytes of it too), or their seat."""
        return cut(e.learner.label, MAX_LABEL) if self.seats is None else f"seat {self.seats[e.learner.id]}"

    def misconceptions(self) -> list[Misconception]:
        """The room's latest failures grouped by mistake, largest first; learners in the report's order."""
        return clusters((e.learner.id, pid, p.last_failure) for e in self.learners for pid in self.puzzles
                        if puzzle_state(p := e.record(pid)) == FAILING)

    def labels_of(self, m: Misconception) -> list[str]:
        by_id = {e.learner.id: e for e in self.learners}
        return [self.label(by_id[i]) for i in m.learners if i in by_id]

    def over_time(self) -> SolvedOverTime | None:
        return solved_over_time(self.learners, self.puzzles)

    def per_puzzle(self) -> dict[str, dict[str, int]]:
        return learners_per_puzzle(self.learners, self.puzzles)

    def solved(self) -> int:
        return sum(1 for e in self.learners for pid in self.puzzles if (r := e.record(pid)) and r.solved)


def load_class(paths: list[Path], *, seats: bool = False) -> ClassReport:
    """Every readable export; the rest listed in `skipped` with the reason. A folder stands for the
    learners' data folders in it (a served room's) or the export files in it (tutor.workshop.folders).
    `seats`: learners by seat number, in the order read, never by name."""
    from .folders import sources

    by_id: dict[str, LearnerExport] = {}
    skipped, notes = [], []
    for path, load in (source for given in paths for source in sources(Path(given), notes)):
        try:
            if isinstance(load, BadExport):
                raise load
            export = load()
        except BadExport as e:
            skipped.append((path, str(e)))
            continue
        earlier = by_id.get(export.learner.id)
        if earlier is not None:
            newer, older = (export, earlier) if export.exported_at >= earlier.exported_at else (earlier, export)
            who = f"seat {list(by_id).index(export.learner.id) + 1}" if seats else newer.learner.label
            notes.append(f"{older.path} and {newer.path} are the same learner ({who}); "
                         f"using the newer, {newer.path}")
            export = newer
        by_id[export.learner.id] = export
    if seats:
        numbers = {learner_id: n for n, learner_id in enumerate(by_id, 1)}
        learners = list(by_id.values())  # in seat order: an order by name would say whose seat is whose
        return ClassReport(learners, _puzzle_order(learners), _title(learners), skipped, notes, numbers)
    learners = sorted(by_id.values(), key=lambda e: e.learner.label.lower())
    return ClassReport(learners, _puzzle_order(learners), _title(learners), skipped, notes)


def report_text(report: ClassReport) -> str:
    n = len(report.puzzles)
    head = f"Class progress: {one_line(report.title)}" if report.title else "Class progress"
    stamps = [e.exported_at for e in report.learners]
    lines = [f"{head} · {len(report.learners)} learner(s) · {n} puzzle(s)"
             + _when(stamps)]
    lines += ["", "Who is where (" + LEGEND + ")"]
    lines += _table(who_is_where(report))
    lines += ["", HOLD_UP_TITLE]
    stats = puzzle_stats(report)
    lines += _table(hold_ups(report, stats))
    lines += [ACTIVE_TIME_NOTE, STILL_ON_IT_NOTE]
    unknown = sum(s.time_unknown for s in stats)
    if unknown:
        lines.append(f"  {unknown} learner-puzzle record(s) have no active time (an older gpu-tutor did not keep it) "
                     "and are left out of the medians; it counts from the learner's first session on an updated one")
    lines += ["", MISCONCEPTIONS_TITLE, *_misconception_table(report)]
    lines += ["", *over_time_text(report.over_time(), report.solved())]
    lines += ["", *per_puzzle_text(report.per_puzzle(), len(report.learners))]
    return "\n".join(lines)


def _misconception_table(report: ClassReport) -> list[str]:
    """Inside COLUMNS: "what went wrong" wrapped, and "who" the first few that fit beside WHAT_WIDTH of it."""
    found = report.misconceptions()
    if not found:
        return [NO_MISCONCEPTIONS]
    puzzles = [cut(one_line(m.puzzle), PUZZLE_WIDTH) for m in found]
    counts = [f"{len(m.learners)} of {len(report.learners)}" for m in found]
    head = ["puzzle", "learners", "what went wrong", "who"]
    taken = 2 + 3 * 2 + max(map(len, puzzles + [head[0]])) + max(map(len, counts + [head[1]])) + WHAT_WIDTH
    rows = [[p, n, m.what(), _first_few(report.labels_of(m), max(COLUMNS - taken, 12))]
            for p, n, m in zip(puzzles, counts, found)]
    return _table([head, *rows], wrap=2)


def who_is_where(report: ClassReport) -> list[list[str]]:
    """The first table, its heading first: one row per learner."""
    n = len(report.puzzles)
    rows = [["learner", "solved", "now on", "progress", "runs", "hint level", "AI hints"]]
    for e in report.learners:
        records = [e.record(p) for p in report.puzzles]
        rows.append([
            report.label(e),
            f"{sum(1 for r in records if r and r.solved)}/{n}",
            e.current_puzzle or "-",
            "".join("#" if r and r.solved else "o" if r and r.first_opened_at else "." for r in records),
            str(sum(r.attempts for r in records if r)),
            _deepest(r.hint_levels_used for r in records if r),
            str(sum(r.ai_hints_used for r in records if r)),
        ])
    return rows


def hold_ups(report: ClassReport, stats: list[PuzzleStats] | None = None) -> list[list[str]]:
    """The second table, its heading first: one row per puzzle, the longest hold-up first."""
    rows = [["puzzle", "solved by", "median active time", "still on it", "median runs", "used hints", "AI hints"]]
    stats = puzzle_stats(report) if stats is None else stats
    for s in sorted(stats, key=lambda s: (-1 if s.median_time is None else -s.median_time, s.solved)):
        rows.append([s.puzzle, f"{s.solved}/{len(report.learners)}", duration(s.median_time),
                     str(s.stuck), "-" if s.median_attempts is None else f"{s.median_attempts:g}",
                     f"{s.hinted} (deepest {s.deepest_hint})" if s.hinted else "0", str(s.ai_hints)])
    return rows


MISCONCEPTIONS_TITLE = "Misconceptions: the room's latest failures grouped by mistake, largest first"
NO_MISCONCEPTIONS = "  none: no learner's latest run on an unsolved puzzle failed (or their gpu-tutor kept no failures)"
WHAT_WIDTH = 30  # the misconception table's "what went wrong", wrapped; "who" shows as many as fit beside it
MAX_CELL = 64  # characters of any other cell: a name of 200,000 in one export padded every row of the table to it
MAX_LABEL = 100  # characters of a learner's name or id, in every output but the CSV of names


HOLD_UP_TITLE = "Puzzles, the longest hold-up first (median active time, to the solution or so far)"
ACTIVE_TIME_NOTE = (f"  active time: the app open and keys, edits or runs on the puzzle; idle gaps over "
                    f"{IDLE_GAP_S / 60:g} min left out")
STILL_ON_IT_NOTE = (f"  still on it: unsolved, the puzzle open last, active on it in the last {STILL_ON_IT_S / 60:g} "
                    "min, and the app not closed since")


@dataclass(frozen=True)
class PuzzleStats:
    puzzle: str
    opened: int
    solved: int
    stuck: int                   # learners on it now, unsolved (LearnerExport.on_it_now)
    median_time: float | None    # active seconds: to solve, or so far
    time_unknown: int            # opened, with no active time recorded (an older gpu-tutor's record)
    median_attempts: float | None
    hinted: int                  # learners who revealed at least one hint
    deepest_hint: int
    ai_hints: int


def puzzle_stats(report: ClassReport) -> list[PuzzleStats]:
    stats = []
    for pid in report.puzzles:
        records = [(e, e.record(pid)) for e in report.learners]
        opened = [(e, r) for e, r in records if r is not None and (r.first_opened_at or r.attempts or r.solved)]
        times = [t for e, _ in opened if (t := e.active_time(pid)) is not None]
        runs = [r.attempts for _, r in opened]
        stats.append(PuzzleStats(
            puzzle=pid, opened=len(opened), solved=sum(1 for _, r in opened if r.solved),
            stuck=sum(1 for e, _ in opened if e.on_it_now(pid)),
            median_time=statistics.median(times) if times else None, time_unknown=len(opened) - len(times),
            median_attempts=statistics.median(runs) if runs else None,
            hinted=sum(1 for _, r in opened if r.hint_levels_used), ai_hints=sum(r.ai_hints_used for _, r in opened),
            deepest_hint=max((r.hint_levels_used for _, r in opened), default=0)))
    return stats


# time_to_solve_s: the clock from first opening to solving (kept as exports always had it);
# active_time_s: the active time the tables use (to solving, or so far).
CSV_COLUMNS = ("learner", "learner_id", "exported_at", "position", "puzzle", "solved", "attempts",
               "time_to_solve_s", "active_time_s", "hint_levels_used", "ai_hints_used", "now_on")


# A spreadsheet runs a cell that starts so as a formula (=HYPERLINK(...) sends data away); a learner's
# name is theirs to type, and an export file anyone's to edit.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(text: str) -> str:
    """`text` as a spreadsheet will show it and never run it: a leading apostrophe where it would start
    a formula."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def report_csv(report: ClassReport) -> str:
    """One row per learner and puzzle, in the report's order; every text as text (spreadsheet_text).
    With seats, `learner` is the seat and `learner_id` is empty."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for e in report.learners:
        for n, pid in enumerate(report.puzzles, 1):
            r = e.record(pid)
            t = e.active_time(pid)
            name, learner_id = (e.learner.name or "", e.learner.id) if report.seats is None else (report.label(e), "")
            writer.writerow(_cells([name, learner_id, iso_time(e.exported_at), n, pid,
                                   "" if r is None else str(r.solved).lower(), "" if r is None else r.attempts,
                                   "" if r is None or r.time_to_solve_s is None else r.time_to_solve_s,
                                   "" if t is None else round(t, 1), "" if r is None else r.hint_levels_used,
                                   "" if r is None else r.ai_hints_used, str(e.current_puzzle == pid).lower()]))
    return out.getvalue()


MISCONCEPTION_COLUMNS = ("puzzle", "learners", "of", "what_went_wrong", "kind", "rule", "array", "line_shape",
                         "other_line_shape", "message_gist", "who")


def misconceptions_csv(report: ClassReport) -> str:
    """One row per misconception, largest first; `who` names every learner in it ("; " between)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(MISCONCEPTION_COLUMNS)
    for m in report.misconceptions():
        writer.writerow(_cells([m.puzzle, len(m.learners), len(report.learners), m.what(), m.kind, m.rule or "",
                                m.array or "", m.shape or "", m.other_shape or "", m.gist,
                                "; ".join(report.labels_of(m))]))
    return out.getvalue()


OVER_TIME_COLUMNS = ("step_start", "step_end", "minutes_from_start", "solved_in_step", "solved_so_far")


def over_time_csv(report: ClassReport) -> str:
    """The numbers of the progress-over-time plot, one row per step (none while nothing solved has a time)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(OVER_TIME_COLUMNS)
    series = report.over_time()
    if series is not None:
        for n, (new, total) in enumerate(zip(series.solved, series.so_far)):
            writer.writerow([iso_time(series.step_start(n)), iso_time(series.step_end(n)),
                             round(n * series.step_s / 60), new, total])
    return out.getvalue()


def beside(path: Path, what: str) -> Path:
    """A file written next to the CSV: class.csv -> class-misconceptions.csv."""
    return path.with_name(f"{path.stem}-{what}{path.suffix or '.csv'}")


def _cells(row: list) -> list:
    """Every text cell through spreadsheet_text: names, ids and puzzle ids all come from files."""
    return [spreadsheet_text(c) if isinstance(c, str) else c for c in row]


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _when(stamps: list[float]) -> str:
    if not stamps:
        return ""
    first, last = utc_text(min(stamps)), utc_text(max(stamps))
    return f" · exported {first}" if first == last else f" · exported from {first} to {last}"


def _deepest(levels) -> str:
    deepest = max(levels, default=0)
    return str(deepest) if deepest else "-"


def _puzzle_order(learners: list[LearnerExport]) -> list[str]:
    """The workshop's order when the exports name one, then any other puzzle in first-seen order."""
    order: list[str] = []
    for e in learners:
        for pid in (e.workshop_puzzles or ()):
            if pid not in order:
                order.append(pid)
    for e in learners:
        for r in e.puzzles:
            if r.id not in order:
                order.append(r.id)
    return order


def _title(learners: list[LearnerExport]) -> str | None:
    titles = {e.workshop_title for e in learners if e.workshop_title}
    return " / ".join(sorted(titles)) if titles else None


def _first_few(labels: list[str], width: int) -> str:
    """As many labels as fit `width` with how many more (one at least, cut short if need be)."""
    labels = [one_line(label) for label in labels]
    more = len(f" +{len(labels)}") if len(labels) > 1 else 0
    shown: list[str] = []
    for n, label in enumerate(labels):
        room = width - (more if n + 1 < len(labels) else 0)
        if shown and len(", ".join(shown + [label])) > room:
            break
        shown.append(cut(label, room) if not shown else label)
    rest = len(labels) - len(shown)
    return ", ".join(shown) + (f" +{rest}" if rest else "")


def _wrapped(text: str, width: int) -> list[str]:
    """`text` in lines of `width`, breaking between words and never inside a `code span` that fits a line."""
    lines = [""]
    for word in _WORDS.findall(text):
        pieces = [word] if len(word) <= width else textwrap.wrap(word, width, break_on_hyphens=False)
        for piece in pieces:
            if lines[-1] and len(lines[-1]) + 1 + len(piece) > width:
                lines.append("")
            lines[-1] += (" " if lines[-1] else "") + piece
    return lines


_WORDS = re.compile(r"`[^`]*`[^\s`]*|\S+")


def _table(rows: list[list[str]], wrap: int | None = None, width: int = COLUMNS) -> list[str]:
    """Columns lined up; column `wrap`, where a line would pass `width`, wrapped onto lines of its own."""
    rows = [[one_line(cell) if i == wrap else cut(one_line(cell), MAX_CELL) for i, cell in enumerate(row)]
            for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    if wrap is not None:
        room = width - 2 - 2 * (len(widths) - 1) - sum(w for i, w in enumerate(widths) if i != wrap)
        widths[wrap] = min(widths[wrap], max(room, 24))
    out = []
    for row in rows:
        pieces = [[cell] for cell in row]
        if wrap is not None:
            pieces[wrap] = _wrapped(row[wrap], widths[wrap])
        for k in range(max(len(p) for p in pieces)):
            cells = [p[k] if k < len(p) else "" for p in pieces]
            out.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(cells, widths)).rstrip())
    return out
