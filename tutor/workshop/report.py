"""The facilitator's view of a room: who is where, which puzzles hold people up, who leans on hints.

`gpu-tutor report FILES...` reads the learners' exports (see tutor.workshop.export), prints three short
tables and writes a CSV with one row per learner and puzzle for a spreadsheet. A file that is bad
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
terminal-safe (tutor.textsafe) before the columns are measured: an escape is shown, and the table
still lines up. The CSV keeps the text as it was, for a spreadsheet.
"""

from __future__ import annotations

import csv
import io
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from tutor.activity import IDLE_GAP_S, STILL_ON_IT_S
from tutor.store import iso_time
from tutor.textsafe import terminal_safe
from .export import BadExport, LearnerExport, utc_text

LEGEND = "progress: # solved, o opened, . not yet"


@dataclass
class ClassReport:
    learners: list[LearnerExport]
    puzzles: list[str]
    title: str | None
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # (file, why)
    notes: list[str] = field(default_factory=list)


def load_class(paths: list[Path]) -> ClassReport:
    """Every readable export; the rest listed in `skipped` with the reason. A folder stands for the
    learners' data folders in it (a served room's) or the export files in it (tutor.workshop.folders)."""
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
            notes.append(f"{older.path} and {newer.path} are the same learner ({newer.learner.label}); "
                         f"using the newer, {newer.path}")
            export = newer
        by_id[export.learner.id] = export
    learners = sorted(by_id.values(), key=lambda e: e.learner.label.lower())
    return ClassReport(learners, _puzzle_order(learners), _title(learners), skipped, notes)


def report_text(report: ClassReport) -> str:
    n = len(report.puzzles)
    head = f"Class progress: {terminal_safe(report.title)}" if report.title else "Class progress"
    stamps = [e.exported_at for e in report.learners]
    lines = [f"{head} · {len(report.learners)} learner(s) · {n} puzzle(s)"
             + _when(stamps)]
    lines += ["", "Who is where (" + LEGEND + ")"]
    rows = [["learner", "solved", "now on", "progress", "runs", "hint level", "AI hints"]]
    for e in report.learners:
        records = [e.record(p) for p in report.puzzles]
        rows.append([
            e.learner.label,
            f"{sum(1 for r in records if r and r.solved)}/{n}",
            e.current_puzzle or "-",
            "".join("#" if r and r.solved else "o" if r and r.first_opened_at else "." for r in records),
            str(sum(r.attempts for r in records if r)),
            _deepest(r.hint_levels_used for r in records if r),
            str(sum(r.ai_hints_used for r in records if r)),
        ])
    lines += _table(rows)
    lines += ["", HOLD_UP_TITLE]
    rows = [["puzzle", "solved by", "median active time", "still on it", "median runs", "used hints", "AI hints"]]
    stats = puzzle_stats(report)
    for s in sorted(stats, key=lambda s: (-1 if s.median_time is None else -s.median_time, s.solved)):
        rows.append([s.puzzle, f"{s.solved}/{len(report.learners)}", duration(s.median_time),
                     str(s.stuck), "-" if s.median_attempts is None else f"{s.median_attempts:g}",
                     f"{s.hinted} (deepest {s.deepest_hint})" if s.hinted else "0", str(s.ai_hints)])
    lines += _table(rows)
    lines += [ACTIVE_TIME_NOTE, STILL_ON_IT_NOTE]
    unknown = sum(s.time_unknown for s in stats)
    if unknown:
        lines.append(f"  {unknown} learner-puzzle record(s) have no active time (an older gpu-tutor did not keep it) "
                     "and are left out of the medians; it counts from the learner's first session on an updated one")
    return "\n".join(lines)


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
    """One row per learner and puzzle, in the report's order; every text as text (spreadsheet_text)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for e in report.learners:
        for n, pid in enumerate(report.puzzles, 1):
            r = e.record(pid)
            t = e.active_time(pid)
            writer.writerow(_cells([e.learner.name or "", e.learner.id, iso_time(e.exported_at), n, pid,
                                   "" if r is None else str(r.solved).lower(), "" if r is None else r.attempts,
                                   "" if r is None or r.time_to_solve_s is None else r.time_to_solve_s,
                                   "" if t is None else round(t, 1), "" if r is None else r.hint_levels_used,
                                   "" if r is None else r.ai_hints_used, str(e.current_puzzle == pid).lower()]))
    return out.getvalue()


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


def _table(rows: list[list[str]]) -> list[str]:
    rows = [[terminal_safe(cell) for cell in row] for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
