"""Where a learner's code and progress live, so that nothing they typed or earned is ever lost.

A learner's kernel is often an hour of thinking; a laptop lid closing, a killed terminal or a full
disk must not cost them it. So every write goes to a temporary file beside the target, is fsynced
and then renamed over it: at any instant the file on disk is either the old complete text or the
new complete text, never half of each. Nothing is deleted either: a file we cannot read is renamed
aside and the learner told where it went, and a reset keeps the previous text as a `.bak-` file.

A broken progress file must not stop someone from learning, so loading never raises: whatever we
cannot understand is set aside, a notice says so, and the app carries on with a fresh start.

The data folder comes from `GPU_TUTOR_DATA` when set (tests, and workshops where every learner
gets a folder of their own), otherwise from the platform's per-user data folder. Layout:

    DATA/code/<puzzle_id>.py     the learner's code, one file per puzzle, plain Python to open anywhere
    DATA/state.json              progress per puzzle, and the puzzle to continue with

Nothing in the data folder is trusted to be what its name says: every file is read through
`read_regular`, which refuses a symbolic link (an `export --with-code` must not hand over the file a
link points to), a named pipe or a device (a read that never ends) and a file past a size cap, and
JSON from other people (exports, learner.json) through `loads_strict`, which refuses Infinity, NaN and
integers too long to be ours; a progress record holding one is refused on its own.

Time comes from an injectable clock so that tests can say "ten minutes later" without waiting.
Time *on* a puzzle is the learner's active time (tutor.activity): the app reports each key, edit and
run with `record_activity`, which only adds to a sum in memory; the sum reaches the disk with the
next progress write, from `flush_activity` at most every WRITE_EVERY_S, and at `record_close`.
The `Autosaver` keeps the editor responsive (it only writes when the learner pauses) while bounding
what a crash can take: at most the last second of typing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import math
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tutor.activity import WRITE_EVERY_S, counted_gap

APP_NAME = "gpu-tutor"
DATA_ENV = "GPU_TUTOR_DATA"
QUOTA_ENV = "GPU_TUTOR_DATA_QUOTA_MB"  # a served learner's folder cap, set by `serve --learner-quota-mb`
STATE_VERSION = 1

Clock = Callable[[], float]

_PUZZLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
# Temporary files a killed writer left behind; only ours match, and only old ones are swept.
_TEMP_SUFFIX = ".tmp"
_STALE_TEMP_S = 3600.0
MB = 1024 * 1024
CODE_LIMIT = 4 * MB    # a kernel file is a few KB; anything near this is not one
STATE_LIMIT = 1 * MB   # state.json holds a few hundred bytes per puzzle
MAX_INT_DIGITS = 20    # every count we write fits; longer is an edited file
_MAX_COUNT = 10 ** MAX_INT_DIGITS  # a record past it would overflow the report's arithmetic


def default_root() -> Path:
    """The data folder: $GPU_TUTOR_DATA when set, else the platform's per-user data folder."""
    override = os.environ.get(DATA_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs  # only needed when no folder was given

    return platformdirs.user_data_path(APP_NAME, appauthor=False)


@dataclass(frozen=True)
class PuzzleProgress:
    """What the learner has done on one puzzle. Times are ISO 8601 in UTC."""

    solved: bool = False
    solved_at: str | None = None
    attempts: int = 0  # runs, passed or not
    first_opened_at: str | None = None
    time_to_solve_s: float | None = None  # clock time from first opening to the first passing run
    hint_levels_used: int = 0  # the deepest hint level revealed
    ai_hints_used: int = 0
    # Active time (tutor.activity); None in a record from a gpu-tutor that did not keep it.
    active_s: float | None = None           # seconds at it, all told
    active_to_solve_s: float | None = None  # seconds at it up to the first passing run
    last_active_at: str | None = None       # the learner's last event on it
    # The room's live view (tutor.workshop.live): when the learner last ran their code on it, and
    # what went wrong that time (tutor.workshop.misconceptions.failure_summary; None: it passed).
    last_run_at: str | None = None
    last_failure: dict | None = None

    def to_json(self) -> dict[str, Any]:
        raw = dataclasses.asdict(self)
        for name in _ACTIVE_SECONDS:  # summed unrounded in memory; the millisecond is enough on disk
            if raw[name] is not None:
                raw[name] = round(raw[name], 3)
        return raw

    @classmethod
    def from_json(cls, raw: Any) -> PuzzleProgress:
        """Raises ValueError when `raw` is not a progress record we understand."""
        if not isinstance(raw, dict):
            raise ValueError("not an object")
        fields: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            if field.name not in raw:
                continue
            value = raw[field.name]
            if not _fits(field.name, value):
                raise ValueError(f"{field.name} = {value!r}")
            if field.name in _SECONDS and value is not None:
                value = float(value)
            fields[field.name] = value
        return cls(**fields)


_ACTIVE_SECONDS = ("active_s", "active_to_solve_s")
_SECONDS = ("time_to_solve_s", *_ACTIVE_SECONDS)


def _fits(name: str, value: Any) -> bool:
    if name == "solved":
        return isinstance(value, bool)
    if name in ("attempts", "hint_levels_used", "ai_hints_used"):
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_COUNT
    if name == "last_failure":
        return value is None or _is_summary(value)
    if name in ("solved_at", "first_opened_at", "last_active_at", "last_run_at"):
        return value is None or (isinstance(value, str) and parse_iso_time(value) is not None)
    if name in _SECONDS:
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return value is None or (is_number and _finite(value) and 0 <= value < _MAX_COUNT)
    return True


_SUMMARY_TEXT = ("kind", "rule", "array", "shape", "other_shape", "gist")


def _is_summary(value: Any) -> bool:
    """A failure summary as the app writes it: short strings (or null) and a line number; a file
    someone edited into anything else is refused like any bad record."""
    if not isinstance(value, dict) or set(value) - {*_SUMMARY_TEXT, "line"} or not isinstance(value.get("kind"), str):
        return False
    if any(value.get(k) is not None and not (isinstance(value[k], str) and len(value[k]) <= 200) for k in _SUMMARY_TEXT):
        return False
    line = value.get("line")
    return line is None or (isinstance(line, int) and not isinstance(line, bool) and 0 <= line < _MAX_COUNT)


def _finite(value: int | float) -> bool:
    """Infinity (or an int past float range) would crash the arithmetic and the report later."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


class Store:
    """A learner's code files and progress, in one data folder.

    Reading never raises on bad data: what cannot be read is moved aside and a line is added to
    `notices` for the app to show. Writing code raises OSError (the caller still holds the text,
    see `Autosaver`); a failed progress write adds a notice and is retried on the next change.
    """

    def __init__(self, root: Path | str | None = None, *, clock: Clock = time.time, read_only: bool = False,
                 quota_mb: int | None = None) -> None:
        """`read_only`: another process owns this folder (a served learner's, read for the class
        report): nothing is swept, moved aside or copied, what cannot be read is only a notice.
        `quota_mb`: what the folder may hold in all (a served room's learner's, set by the
        facilitator); a write past it raises QuotaExceeded and the caller keeps the text."""
        self.root: Path = Path(root) if root is not None else default_root()
        self.read_only = read_only
        self.quota = quota_mb * MB if quota_mb else None
        self.notices: list[str] = []
        self._clock = clock
        self._progress: dict[str, PuzzleProgress] = {}
        self._last_puzzle: str | None = None
        self._closed_at: str | None = None  # when the app last closed (record_close)
        self._span: _Span | None = None  # the learner's activity on one puzzle, not yet in _progress
        self._activity_unsaved = False  # active time in memory that the state file lacks
        self._written_at = -math.inf  # when the state file was last written (the store's clock)
        self._unknown_keys: dict[str, Any] = {}  # written by a newer version: kept as they are
        self._state_writable = True
        self._state_write_failed = False
        if not read_only:
            self._sweep_stale_temp_files()
        self._load_state()

    # ---- paths

    @property
    def code_dir(self) -> Path:
        return self.root / "code"

    @property
    def state_path(self) -> Path:
        return self.root / "state.json"

    def code_path(self, puzzle_id: str) -> Path:
        if not _PUZZLE_ID.fullmatch(puzzle_id):
            raise ValueError(f"not a puzzle id: {puzzle_id!r}")
        return self.code_dir / f"{puzzle_id}.py"

    # ---- code

    def load_code(self, puzzle_id: str, starter: str) -> str:
        """The learner's saved code, or `starter` when there is none (or it could not be read)."""
        path = self.code_path(puzzle_id)
        try:
            return read_regular(path, CODE_LIMIT).decode("utf-8")
        except (FileNotFoundError, NotADirectoryError):  # nothing saved (yet)
            return starter
        except (OSError, UnicodeDecodeError) as exc:
            why = f"could not be read ({_reason(exc)})"
            aside = self._move_aside(path, "unreadable")
            if aside is None:
                self.notices.append(f"your code for '{puzzle_id}' ({path}) {why}, and could not be moved "
                                    "aside; showing the starter code")
            else:
                self.notices.append(f"your code for '{puzzle_id}' {why} and was moved to {aside}; "
                                    "showing the starter code")
            return starter

    def save_code(self, puzzle_id: str, text: str) -> bool:
        """Write `text` atomically; returns False when the file already holds exactly this text."""
        path = self.code_path(puzzle_id)
        data = text.encode("utf-8")
        with contextlib.suppress(OSError):
            if read_regular(path, CODE_LIMIT) == data:
                return False
        self.room_for(len(data), replacing=path)
        write_atomic(path, data)
        return True

    def room_for(self, size: int, replacing: Path | None = None) -> None:
        """Raise QuotaExceeded when writing `size` more bytes (in place of `replacing`) would take the
        folder past its quota. What a file takes is counted by the blocks it holds on disk."""
        if self.quota is None:
            return
        used = folder_size(self.root)
        if replacing is not None:
            with contextlib.suppress(OSError):
                used -= os.lstat(replacing).st_blocks * 512
        if used + size > self.quota:
            raise QuotaExceeded(used, self.quota)

    def reset_code(self, puzzle_id: str, starter: str) -> Path | None:
        """Put the starter back. The previous text is kept as code/<id>.py.bak-<time>; returns that path
        (None when there was nothing but the starter to keep)."""
        path = self.code_path(puzzle_id)
        try:
            unchanged = read_regular(path, CODE_LIMIT) == starter.encode("utf-8")
        except (FileNotFoundError, NotADirectoryError):
            unchanged = True
        except OSError:
            unchanged = False
        backup = None
        if not unchanged:
            self.room_for(len(starter.encode("utf-8")))  # the old text stays, as the backup
            backup = _unused(path.with_name(f"{path.name}.bak-{self._stamp()}"))
            os.rename(path, backup)  # raises rather than reset over text we could not keep
        self.save_code(puzzle_id, starter)
        return backup

    # ---- progress

    def progress(self, puzzle_id: str) -> PuzzleProgress:
        if self._span is not None and self._span.puzzle_id == puzzle_id:
            self._fold_span()
        return self._progress.get(puzzle_id, PuzzleProgress())

    @property
    def last_puzzle(self) -> str | None:
        """The puzzle opened last, to continue where the learner left off."""
        return self._last_puzzle

    @property
    def closed_at(self) -> str | None:
        """When the learner's app last closed (ISO time), None when it never has: a learner whose app
        closed after their last event is on no puzzle now (tutor.activity)."""
        return self._closed_at

    def solved_count(self, puzzle_ids: Iterable[str]) -> int:
        return sum(1 for pid in puzzle_ids if self.progress(pid).solved)

    # An event on a puzzle (tutor.activity). It is kept in memory: the app calls this on every key.
    def record_activity(self, puzzle_id: str, now: float | None = None) -> None:
        """The learner did something on `puzzle_id` (a key, a click, an edit) at `now` (the store's
        clock when None). Doing something on another puzzle ends the span on the one before."""
        now = self._clock() if now is None else now
        span = self._span
        if span is not None and span.puzzle_id == puzzle_id:
            span.add(now)
        else:
            self.code_path(puzzle_id)  # validates the id before it reaches the state file
            self._end_span(now)
            self._span = _Span(puzzle_id, now)
        self._activity_unsaved = True

    def flush_activity(self, now: float | None = None) -> bool:
        """Write the active time kept in memory when the state file has gone WRITE_EVERY_S without it
        (the app calls this from its autosave tick); True when it wrote."""
        now = self._clock() if now is None else now
        if not (self._activity_unsaved and self._state_writable) or now - self._written_at < WRITE_EVERY_S:
            return False
        self._write_state()
        return True

    def record_close(self, now: float | None = None) -> None:
        """The app is closing (quit, or its browser tab closed): the span on the open puzzle ends
        here and the close is written, so that no puzzle reads as "still on it"."""
        now = self._clock() if now is None else now
        self._end_span(now)
        self._closed_at = iso_time(now)
        self._write_state()

    def record_open(self, puzzle_id: str) -> None:
        now = self._clock()
        self.record_activity(puzzle_id, now)
        current = self.progress(puzzle_id)
        if current.first_opened_at is None:
            current = dataclasses.replace(current, first_opened_at=iso_time(now))
        self._last_puzzle = puzzle_id
        self._update(puzzle_id, current)

    def record_run(self, puzzle_id: str, passed: bool, failure: dict | None = None) -> PuzzleProgress:
        """One run of the learner's code. The first passing run marks the puzzle solved. `failure`:
        what went wrong (misconceptions.failure_summary), for the facilitator's live view."""
        now = self._clock()
        self.record_activity(puzzle_id, now)
        current = self.progress(puzzle_id)
        if failure is not None and (passed or not _is_summary(failure)):
            failure = None
        current = dataclasses.replace(current, attempts=current.attempts + 1, last_run_at=iso_time(now),
                                      last_failure=failure)
        if passed and not current.solved:
            opened = parse_iso_time(current.first_opened_at) if current.first_opened_at else None
            current = dataclasses.replace(
                current, solved=True, solved_at=iso_time(now), active_to_solve_s=current.active_s,
                time_to_solve_s=None if opened is None else round(max(0.0, now - opened), 3))
        if current.first_opened_at is None:  # run without an open (e.g. from a script)
            current = dataclasses.replace(current, first_opened_at=iso_time(now))
        self._update(puzzle_id, current)
        return current

    def record_hint(self, puzzle_id: str, level: int, ai: bool = False) -> PuzzleProgress:
        """The learner revealed hint `level` (1 = the first); `ai` for a hint asked of the AI tutor."""
        if level < 0:
            raise ValueError(f"hint level must be >= 0, not {level}")
        self.record_activity(puzzle_id)
        current = self.progress(puzzle_id)
        if ai:
            current = dataclasses.replace(current, ai_hints_used=current.ai_hints_used + 1)
        else:
            current = dataclasses.replace(current, hint_levels_used=max(current.hint_levels_used, level))
        self._update(puzzle_id, current)
        return current

    def _end_span(self, now: float) -> None:
        """The span on the puzzle the learner leaves (for another, or closing) ends at `now`."""
        if self._span is not None:
            self._span.end(now)
            self._fold_span()
            self._span = None

    def _fold_span(self) -> None:
        """The span's active seconds, so far, into its puzzle's record (memory only)."""
        span = self._span
        if span.folded:
            return
        current = self._progress.get(span.puzzle_id, PuzzleProgress())
        self._progress[span.puzzle_id] = dataclasses.replace(
            current, active_s=(current.active_s or 0.0) + span.unfolded, last_active_at=iso_time(span.last))
        span.unfolded, span.folded = 0.0, True

    # ---- state file

    def _update(self, puzzle_id: str, progress: PuzzleProgress) -> None:
        self.code_path(puzzle_id)  # validates the id before it reaches the state file
        self._progress[puzzle_id] = progress
        self._write_state()

    def _write_state(self) -> None:
        if not self._state_writable:
            return
        if self._span is not None:
            self._fold_span()
        state = {
            **self._unknown_keys,
            "version": STATE_VERSION,
            "last_puzzle": self._last_puzzle,
            "closed_at": self._closed_at,
            "puzzles": {pid: p.to_json() for pid, p in sorted(self._progress.items())},
        }
        try:
            write_atomic(self.state_path, (json.dumps(state, indent=2) + "\n").encode("utf-8"))
        except OSError as exc:
            if not self._state_write_failed:  # one notice, not one per run
                self.notices.append(f"your progress could not be saved to {self.state_path} "
                                    f"({exc.strerror or exc}); it will be retried on your next step")
            self._state_write_failed = True
        else:
            self._state_write_failed = False
            self._activity_unsaved = False
            self._written_at = self._clock()

    def _load_state(self) -> None:
        path = self.state_path
        try:
            raw = json.loads(read_regular(path, STATE_LIMIT).decode("utf-8"))
        except (FileNotFoundError, NotADirectoryError):  # a first start
            return
        except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad JSON or bad UTF-8
            self._set_aside_state(f"was unreadable ({_reason(exc)})")
            return
        if not isinstance(raw, dict) or not isinstance(raw.get("puzzles", {}), dict):
            self._set_aside_state("was not a progress file")
            return
        bad: list[str] = []
        for pid, entry in raw.get("puzzles", {}).items():
            try:
                if not _PUZZLE_ID.fullmatch(pid):
                    raise ValueError("bad puzzle id")
                self._progress[pid] = PuzzleProgress.from_json(entry)
            except ValueError:
                bad.append(pid)
        last = raw.get("last_puzzle")
        if isinstance(last, str) and _PUZZLE_ID.fullmatch(last):
            self._last_puzzle = last
        elif last is not None:
            bad.append("last_puzzle")
        closed = raw.get("closed_at")  # absent from the files of a gpu-tutor that did not keep it
        if isinstance(closed, str) and parse_iso_time(closed) is not None:
            self._closed_at = closed
        elif closed is not None:
            bad.append("closed_at")
        self._unknown_keys = {k: v for k, v in raw.items()
                              if k not in ("version", "last_puzzle", "closed_at", "puzzles")}
        if bad and self.read_only:
            self.notices.append(f"part of the progress file {path} was unreadable ({', '.join(bad)})")
        elif bad:
            # Keep what we understood; keep the original file too, since we are about to rewrite it.
            copy = _unused(path.with_name(f"{path.name}.corrupt-{self._stamp()}"))
            try:
                write_atomic(copy, read_regular(path, STATE_LIMIT))
            except OSError:
                self._state_writable = False
                self.notices.append(f"part of your progress file {path} was unreadable ({', '.join(bad)}); "
                                    "it is left as it is and progress will not be saved this session")
            else:
                self.notices.append(f"part of your progress file was unreadable ({', '.join(bad)}); the rest "
                                    f"was kept, and the original file was copied to {copy}")

    def _set_aside_state(self, why: str) -> None:
        if self.read_only:
            self.notices.append(f"the progress file {self.state_path} {why}; read as empty")
            return
        aside = self._move_aside(self.state_path, "corrupt")
        if aside is None:
            self._state_writable = False  # never write over a file we could neither read nor move
            self.notices.append(f"your progress file {self.state_path} {why} and could not be moved aside; "
                                "starting fresh, and progress will not be saved this session")
        else:
            self.notices.append(f"your progress file {why} and was moved to {aside}; starting fresh")

    # ---- helpers

    def _move_aside(self, path: Path, tag: str) -> Path | None:
        aside = _unused(path.with_name(f"{path.name}.{tag}-{self._stamp()}"))
        try:
            os.rename(path, aside)
        except OSError:
            return None
        return aside

    def _stamp(self) -> str:
        return datetime.fromtimestamp(self._clock()).strftime("%Y%m%dT%H%M%S")

    def _sweep_stale_temp_files(self) -> None:
        cutoff = time.time() - _STALE_TEMP_S  # file times are real time, whatever the clock says
        for folder in (self.root, self.code_dir):
            with contextlib.suppress(OSError):
                for temp in folder.glob(f".*{_TEMP_SUFFIX}"):
                    with contextlib.suppress(OSError):
                        if temp.is_file() and temp.stat().st_mtime < cutoff:
                            temp.unlink()


@dataclass
class _Span:
    """The learner's current run of events on one puzzle (tutor.activity), kept off the disk."""

    puzzle_id: str
    last: float  # the latest event (or the moment the span ended)
    unfolded: float = 0.0  # active seconds not yet added to the puzzle's record
    folded: bool = False  # the record holds all of this span so far

    def add(self, now: float) -> None:
        """An event at `now`: the gap since the last one counts when it is short (tutor.activity)."""
        self.unfolded += counted_gap(self.last, now)
        self.last, self.folded = now, False

    def end(self, now: float) -> None:
        """The learner left the puzzle at `now`: up to then counts if the gap is short; after a long
        one their last event stays where they went idle."""
        gap = counted_gap(self.last, now)
        if gap > 0:
            self.unfolded += gap
            self.last, self.folded = now, False


class Autosaver:
    """Decides when to save the editor's text, without threads or timers of its own.

    The app calls `feed` on every change and, from a timer of its own (say every 0.1 s), `flush`
    when `due` says so; on quit or when switching puzzles it calls `flush` directly. A save happens
    once typing pauses for `debounce_s`, and never later than `max_delay_s` after the first unsaved
    change, so a crash costs at most about a second of typing.
    """

    def __init__(self, save: Callable[[str, str], object], *, debounce_s: float = 0.5,
                 max_delay_s: float = 1.0) -> None:
        if not 0 <= debounce_s <= max_delay_s:
            raise ValueError("need 0 <= debounce_s <= max_delay_s")
        self._save = save
        self.debounce_s = debounce_s
        self.max_delay_s = max_delay_s
        self._pending: dict[str, _Pending] = {}
        self.last_error: OSError | None = None

    def feed(self, puzzle_id: str, text: str, now: float) -> None:
        pending = self._pending.get(puzzle_id)
        if pending is None:
            self._pending[puzzle_id] = _Pending(text, first_change=now, last_change=now)
        else:
            pending.text, pending.last_change = text, now

    def next_due(self) -> float | None:
        """When the earliest pending save falls due (for a one-shot timer); None when all is saved."""
        deadlines = (p.deadline(self.debounce_s, self.max_delay_s) for p in self._pending.values())
        return min(deadlines, default=None)

    def due(self, now: float) -> bool:
        deadline = self.next_due()
        return deadline is not None and now >= deadline

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def unsaved(self, puzzle_id: str) -> str | None:
        """The text typed for a puzzle and not saved yet (a failed save keeps it here), or None."""
        pending = self._pending.get(puzzle_id)
        return pending.text if pending is not None else None

    def flush(self) -> bool:
        """Save everything pending, due or not. On a failed save the text stays pending (and `due`)
        so the next flush retries; the error is kept in `last_error` and False returned."""
        ok = True
        for puzzle_id, pending in list(self._pending.items()):
            try:
                self._save(puzzle_id, pending.text)
            except OSError as exc:
                self.last_error, ok = exc, False
            else:
                if self._pending.get(puzzle_id) is pending:
                    del self._pending[puzzle_id]
        if ok:
            self.last_error = None
        return ok


@dataclass
class _Pending:
    text: str
    first_change: float
    last_change: float

    def deadline(self, debounce_s: float, max_delay_s: float) -> float:
        return min(self.last_change + debounce_s, self.first_change + max_delay_s)


# ---- files and times


class QuotaExceeded(OSError):
    """The learner's folder holds all its facilitator allows: the text stays where it was typed."""

    def __init__(self, used: int, quota: int) -> None:
        super().__init__(errno.EDQUOT, f"your folder holds {used / MB:.1f} MB of the {quota / MB:.0f} MB your "
                                       "facilitator allows each learner; your code stays in the editor, unsaved: "
                                       "ask your facilitator (gpu-tutor serve --learner-quota-mb)")


def folder_size(root: Path, most_entries: int = 100_000) -> int:
    """Bytes a folder's files hold on disk (a folder of more entries than a learner makes counts as
    full: it is not worth walking)."""
    total, entries, stack = 0, 0, [root]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    entries += 1
                    if entries > most_entries:
                        return 1 << 62
                    with contextlib.suppress(OSError):
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            pass
    return total


class UnreadableFile(OSError):
    """A path gpu-tutor will not read: a link, a pipe, a device, a socket, or a file past its cap.
    `strerror` says which and what to do, without the path, for messages that name it already;
    `str()` puts the path first."""

    def __init__(self, path: Path | str, why: str) -> None:
        super().__init__(errno.EINVAL, why, os.fspath(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


_NOT_REGULAR = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
                (stat.S_ISSOCK, "a socket"))


def read_regular(path: Path | str, limit: int, *, follow_links: bool = False) -> bytes:
    """The bytes of `path`, which must be a regular file of at most `limit` bytes.

    Raises FileNotFoundError, IsADirectoryError, UnreadableFile (a symbolic link unless
    `follow_links`, a pipe, a device, a socket, a file over `limit`) or another OSError. The open
    never blocks (O_NONBLOCK: a pipe with no writer would wait forever) and never follows a final
    link (O_NOFOLLOW), and the type is checked on the open file, so nothing can be swapped in between.
    `follow_links` is for files a person names (a settings file kept in a dotfiles repository)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
            raise UnreadableFile(path, "is a symbolic link, which gpu-tutor does not follow here; put the file "
                                       "itself in its place") from None
        raise
    try:
        _check_regular(path, os.fstat(fd), limit)
        return _read_at_most(fd, path, limit)
    finally:
        os.close(fd)


def _check_regular(path: Path | str, info: os.stat_result, limit: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", os.fspath(path))
    for test, what in _NOT_REGULAR:
        if test(info.st_mode):
            raise UnreadableFile(path, f"is {what}, not a regular file; remove it or put a regular file in its place")
    if info.st_size > limit:
        raise _too_large(path, limit)


def _read_at_most(fd: int, path: Path | str, limit: int) -> bytes:
    """Reads past the size fstat gave, in case the file grows while we read it."""
    chunks, total = [], 0
    while chunk := os.read(fd, min(1 * MB, limit + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_large(path, limit)
    return b"".join(chunks)


def _too_large(path: Path | str, limit: int) -> UnreadableFile:
    size = f"{limit // MB} MB" if limit >= MB else f"{limit // 1024} KB"
    return UnreadableFile(path, f"is larger than {size}, more than gpu-tutor reads from such a file; "
                                "move it away if it is not one gpu-tutor wrote")


def append_regular(path: Path, data: bytes) -> None:
    """Append to a log file, creating it; never through a link, never blocking on a pipe
    (O_NONBLOCK makes opening a pipe with no reader fail at once instead of waiting for one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnreadableFile(path, "is not a regular file; remove it so that gpu-tutor can write its log")
        os.write(fd, data)
    finally:
        os.close(fd)


class NotOurJSON(ValueError):
    """JSON that is valid but holds a number gpu-tutor never writes."""


def loads_strict(text: str) -> Any:
    """JSON without the values that pass `json.loads` and break everything after it: Infinity and
    NaN (no count or time is infinite), floats past float range, and integers of more than
    MAX_INT_DIGITS digits. Raises NotOurJSON (a ValueError), or json's own errors."""
    return json.loads(text, parse_constant=_refuse_constant, parse_int=_short_int, parse_float=_finite_float)


def _refuse_constant(name: str):
    raise NotOurJSON(f"holds {name}, which no count or time can be")


def _short_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise NotOurJSON(f"holds an integer of {len(digits.lstrip('-'))} digits (gpu-tutor writes at most "
                         f"{MAX_INT_DIGITS})")
    return int(digits)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotOurJSON(f"holds {text[:40]}, a number past the range of a float")
    return value


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that a crash at any moment leaves the old or the new file whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=_TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself survive a power cut (POSIX; a no-op where folders cannot be opened)."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _unused(path: Path) -> Path:
    """`path`, or `path-2`, `path-3`... : the first name not taken, so nothing set aside is overwritten."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


def iso_time(t: float) -> str:
    """`t` (seconds since the epoch) as an ISO 8601 time in UTC, to the millisecond."""
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds")


def parse_iso_time(text: str) -> float | None:
    """Seconds since the epoch for an ISO 8601 time (UTC when it names no zone), or None for anything else.
    None also for a time whose UTC form falls outside what datetime can show (year 9999 at -23:59),
    which would otherwise crash whoever prints it."""
    try:
        parsed = datetime.fromisoformat(text)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        stamp = parsed.timestamp()
        datetime.fromtimestamp(stamp, timezone.utc)
    except (ValueError, OverflowError, OSError):
        return None
    return stamp


def _reason(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg} at line {exc.lineno}"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)
