"""The facilitator's live picture of a room, read again every second from the learners' folders.

`LiveRoom(path).refresh()` gives a `RoomPicture`: who is on which puzzle (solved, working with the
active time on it, failing with the latest failure's kind, untouched), the room's misconceptions
(tutor.workshop.misconceptions: its latest failures grouped by mistake, largest first), hint use by
puzzle and level, who has not run anything for IDLE_RUN_S, and the folders it could not read, each
with why. It reads what `gpu-tutor report` reads (a served room's DATA, one learner's data folder,
or a folder of exports), through the same readers (tutor.workshop.folders), and writes nothing.

A refresh must stay cheap with a hundred learners saving every second: a learner's folder (or
export file) is read again only when one of its files changed size or time; the rest of the picture
(times, who is idle) is worked out afresh from what was read. A folder that is a link, a file that
is not ours, a record someone edited: each is a line in `problems`, and the room goes on without it.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from tutor.store import PuzzleProgress, parse_iso_time
from tutor.textsafe import terminal_safe
from .export import BadExport, LearnerExport
from .learner import PLAIN_ID, check_name
from .misconceptions import Misconception, clusters

IDLE_RUN_S = 10 * 60.0  # "has not run anything for ten minutes"
MAX_LABEL = 64  # a learner's label in the grid
MAX_WHY = 400  # why a folder was left out
MAX_STRAY = 20  # entries of learners/ that are no learner's folder, named one by one
SOLVED, FAILING, WORKING, UNTOUCHED = "solved", "failing", "working", "untouched"


@dataclass(frozen=True)
class Cell:
    """One learner on one puzzle."""
    state: str                  # SOLVED, FAILING (their latest run failed), WORKING (opened, no failing run last), UNTOUCHED
    active_s: float | None      # active time on it: to the solution, or so far
    runs: int = 0
    failure: dict | None = None  # the latest run's failure summary, while FAILING
    hint_level: int = 0
    ai_hints: int = 0


@dataclass
class Row:
    """One learner."""
    id: str
    label: str                  # their name, or their id (or a seat number, where names are hidden)
    source: Path                # their data folder or export file
    cells: dict[str, Cell]
    current: str | None         # the puzzle open last
    solved: int
    stuck_s: float              # active time on the puzzle they are on, while it is unsolved
    last_run_at: float | None   # their latest run on any puzzle
    idle: bool                  # working on something and no run for IDLE_RUN_S (or never one)
    on_now: bool                # active on their current puzzle lately, app not closed


@dataclass
class RoomPicture:
    title: str | None
    puzzles: list[str]
    rows: list[Row]
    misconceptions: list[Misconception]
    # (file or folder, why it was left out or part of it could not be read); `why` is safe to print, the
    # path is not (anyone can name a folder): show it through tutor.textsafe.terminal_safe
    problems: list[tuple[Path, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    taken_at: float = 0.0

    def sorted_rows(self, by: str = "name") -> list[Row]:
        """"progress": most solved first; "stuck": longest stuck first; "name" (seat 2 before seat 10)."""
        if by == "progress":
            return sorted(self.rows, key=lambda r: (-r.solved, _natural(r.label)))
        if by == "stuck":
            return sorted(self.rows, key=lambda r: (-r.stuck_s, _natural(r.label)))
        return sorted(self.rows, key=lambda r: _natural(r.label))

    def hints(self) -> dict[str, dict[int, int]]:
        """Per puzzle, how many learners' deepest hint was each level (1 up), and "ai" as level 0
        counting learners who asked the AI tutor at all."""
        out: dict[str, dict[int, int]] = {p: {} for p in self.puzzles}
        for row in self.rows:
            for pid, cell in row.cells.items():
                level = out.setdefault(pid, {})
                if cell.hint_level:
                    level[cell.hint_level] = level.get(cell.hint_level, 0) + 1
                if cell.ai_hints:
                    level[0] = level.get(0, 0) + 1
        return out

    def idle(self) -> list[Row]:
        return [r for r in self.sorted_rows("stuck") if r.idle]

    def learners_of(self, m: Misconception) -> list[Row]:
        by_id = {r.id: r for r in self.rows}
        return [by_id[i] for i in m.learners if i in by_id]


class LiveRoom:
    """A room's folder, read again on each refresh where its files changed."""

    def __init__(self, path: Path | str, *, clock=time.time, seat_numbers: bool = False):
        self.path = Path(path)
        self.clock = clock
        self.seat_numbers = seat_numbers
        self._read: dict[Path, tuple[tuple, LearnerExport | BadExport, list[str]]] = {}
        self._seats: dict[str, int] = {}

    def refresh(self) -> RoomPicture:
        from .folders import sources

        now = self.clock()
        notes: list[str] = []
        problems: list[tuple[Path, str]] = []
        exports: dict[str, LearnerExport] = {}
        seen: set[Path] = set()
        try:
            found = sources(self.path, notes)
        except OSError as e:
            found = [(self.path, BadExport(f"cannot be read ({e.strerror or e})"))]
        for path, load in found:
            seen.add(path)
            if isinstance(load, BadExport):
                problems.append((path, _why(str(load))))
                continue
            got, said = self._load(path, load, notes)
            if isinstance(got, BadExport):
                problems.append((path, _why(str(got))))
                continue
            problems += [(path, _why(s)) for s in said]
            if said and all(r.progress == PuzzleProgress() for r in got.puzzles):
                continue  # nothing of theirs could be read: not a learner who did nothing
            earlier = exports.get(got.learner.id)
            if earlier is None or got.exported_at >= earlier.exported_at:
                exports[got.learner.id] = got
        problems += self._links()
        for gone in set(self._read) - seen:
            del self._read[gone]
        puzzles = _puzzles(list(exports.values()))
        rows = [self._row(e, puzzles, now) for e in exports.values()]
        latest = [(r.id, pid, c.failure) for r in sorted(rows, key=lambda r: r.label.lower())
                  for pid, c in r.cells.items() if c.state == FAILING and c.failure]
        title = next((e.workshop_title for e in exports.values() if e.workshop_title), None)
        return RoomPicture(title, puzzles, rows, clusters(latest), problems, _unique(notes), now)

    def _load(self, path: Path, load, notes: list[str]) -> tuple[LearnerExport | BadExport, list[str]]:
        """The export of a folder or file, read again only where a file of it changed, and what
        reading it said (a progress file that could not be read, in part or whole): kept with it,
        so that it is said on every refresh, not only on the one that read it."""
        signature = _signature(path)
        kept = self._read.get(path)
        if kept is not None and kept[0] == signature:
            return kept[1], kept[2]
        start = len(notes)
        try:
            got = load()
        except BadExport as e:
            got = e
        except (OSError, ValueError, RecursionError, MemoryError) as e:
            got = BadExport(f"cannot be read ({type(e).__name__}: {str(e)[:120]})")
        said = [n.removeprefix(f"{path}: ") for n in notes[start:]]
        del notes[start:]
        self._read[path] = (signature, got, said)
        return got, said

    def _links(self) -> list[tuple[Path, str]]:
        """Entries of a served room's learners/ that are no learner's folder (links, files): `sources`
        leaves them out; say so, each of the first MAX_STRAY, then how many more, so that a folder of
        thousands of stray files is a few lines and not thousands."""
        from .folders import stray_entries

        try:
            stray = stray_entries(self.path)
        except OSError:
            return []
        out = [(self.path / "learners" / name, why) for name, why in stray[:MAX_STRAY]]
        if len(stray) > MAX_STRAY:
            out.append((self.path / "learners", f"holds {len(stray) - MAX_STRAY} more entries that are not "
                                                "learners' folders (links or files): left out"))
        return out

    def _row(self, e: LearnerExport, puzzles: list[str], now: float) -> Row:
        cells, last_run = {}, None
        for pid in puzzles:
            p = e.record(pid)
            if p is None:
                cells[pid] = Cell(UNTOUCHED, None)
                continue
            ran = parse_iso_time(p.last_run_at) if p.last_run_at else None
            if ran is not None and (last_run is None or ran > last_run):
                last_run = ran
            state = puzzle_state(p)
            cells[pid] = Cell(state, e.active_time(pid), p.attempts, p.last_failure if state == FAILING else None,
                              p.hint_levels_used, p.ai_hints_used)
        current = e.current_puzzle
        # on it as of now for a folder (it is live), as of its writing for an export file (a snapshot)
        on = current is not None and e.on_it_now(current, at=now if e.path.is_dir() else None)
        stuck = 0.0
        if current in cells and cells[current].state in (WORKING, FAILING):
            stuck = cells[current].active_s or 0.0
        working = any(c.state in (WORKING, FAILING) for c in cells.values())
        idle = working and on and (last_run is None or now - last_run >= IDLE_RUN_S)
        label = _label(e.learner)
        if self.seat_numbers:
            label = f"seat {self._seats.setdefault(e.learner.id, len(self._seats) + 1)}"
        return Row(e.learner.id, label, e.path, cells, current, sum(c.state == SOLVED for c in cells.values()),
                   stuck, last_run, idle, on)


def puzzle_state(p: PuzzleProgress | None) -> str:
    """SOLVED, FAILING, WORKING or UNTOUCHED: one rule for the live view and `gpu-tutor report`."""
    if p is None:
        return UNTOUCHED
    if p.solved:
        return SOLVED
    if p.last_failure and p.attempts:
        return FAILING
    if p.first_opened_at or p.attempts:
        return WORKING
    return UNTOUCHED


def _signature(path: Path) -> tuple:
    """What changes when a learner's files do: sizes and times of the folder's files (or the file)."""
    def stat(p: Path):
        try:
            s = os.stat(p, follow_symlinks=False)
            return (s.st_size, s.st_mtime_ns, s.st_ino)
        except OSError:
            return None

    if not path.is_dir():
        return (stat(path),)
    return (stat(path / "state.json"), stat(path / "learner.json"), stat(path))


def _puzzles(exports: list[LearnerExport]) -> list[str]:
    """The room's puzzles: the workshop's list where the exports carry one, else every puzzle any
    learner opened, in the catalog's order."""
    for e in exports:
        if e.workshop_puzzles:
            return list(e.workshop_puzzles)
    from tutor.puzzles import load_catalog

    opened = {r.id for e in exports for r in e.puzzles}
    order = [pid for pid in load_catalog(on_demand=True).ids() if pid in opened]
    return order + sorted(opened - set(order))


def _label(learner) -> str:
    """A name fit for the grid: an export file's name and id are whatever was typed into the file
    (learner.json's are checked when read): escapes shown, never obeyed, and cut short."""
    if learner.name and check_name(learner.name)[1] is None:
        return check_name(learner.name)[0]
    if PLAIN_ID.fullmatch(learner.id):
        return learner.id
    return terminal_safe(" ".join(learner.id.split()))[:MAX_LABEL] or "(no id)"


def _why(text: str) -> str:
    """Why a folder or file was left out, safe to show: it may quote a path someone else named."""
    return terminal_safe(text)[:MAX_WHY]


def _natural(label: str) -> tuple:
    """A label as people order it: its runs of digits by number ("seat 2" before "seat 10"), compared
    by length then digits, so that a name of a thousand digits is no int to parse."""
    def key(part: str) -> tuple:
        digits = part.lstrip("0")
        return (0, len(digits), digits) if part.isdigit() else (1, 0, part)

    return tuple(key(part) for part in re.split(r"(\d+)", label.lower()))


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
