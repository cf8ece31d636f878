"""A learner's progress as one JSON file a facilitator can collect, and the reader that checks one.

`gpu-tutor export` writes it from the learner's data folder; `gpu-tutor report` reads a class's worth
of them. The format lives here, on both sides, so writer and reader cannot drift apart:

    {"format": "gpu-tutor-progress", "version": 1, "exported_at": ISO time,
     "learner": {"id": "learner-3f2a9c1b", "name": "Ada" or null},
     "workshop": {"title": ..., "puzzles": [ids]} or null,
     "current_puzzle": the puzzle open last, or null,
     "app_closed_at": when the learner's app last closed, or null (absent from older exports),
     "puzzles": [{"id", "solved", "attempts", "time_to_solve_s", "hint_levels_used", "ai_hints_used",
                  "first_opened_at", "solved_at", "active_s", "active_to_solve_s", "last_active_at",
                  "last_run_at", "last_failure", and "code" only when asked for}, ...]}

The active-time keys (tutor.activity) came later than version 1 itself, and the latest run's time
and failure summary (tutor.workshop.misconceptions) later still: an export without them is still a
version-1 export, whose times are unknown rather than wrong and whose failures are not known, and an
older reader ignores them.

Code stays out unless the learner (or facilitator) asks with --with-code: progress is for the class
table, code is the learner's own. Files passed around a room get cut short, edited or mixed up, so
the reader never trusts one: whatever is wrong is reported as one line naming the file and the key.
Nor is a file trusted to be a file: a link, a pipe or a device among the exports (or among a
learner's code files, for --with-code) is named and left out, never followed or waited on.
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from tutor.activity import on_it_now
from tutor.store import (CODE_LIMIT, MB, NotOurJSON, PuzzleProgress, Store, UnreadableFile, iso_time, loads_strict,
                     parse_iso_time, read_regular, write_atomic)
from .learner import Learner

FORMAT = "gpu-tutor-progress"
VERSION = 1
_FIELDS = ("solved", "attempts", "time_to_solve_s", "hint_levels_used", "ai_hints_used")
EXPORT_LIMIT = 4 * MB  # progress is a few KB; with every puzzle's code, still far below this
# gpu-tutor has 30 puzzles: a list of more is no workshop and no export it wrote, and would make every
# learner a row as wide as the list in the live view and the report
MAX_PUZZLES = 500
MAX_ID = 100  # characters of a puzzle's id (the catalog's longest is 22) or a learner's (ours are 16)


def build_export(store: Store, learner: Learner, puzzle_ids: list[str], *, workshop=None,
                 with_code: bool = False, now: float | None = None, notes: list[str] | None = None) -> dict:
    """The export of `store` for `puzzle_ids`, in that order. A code file left out (a link, a pipe,
    unreadable) gets a line in `notes`, for the learner to see."""
    puzzles = []
    for pid in puzzle_ids:
        entry = {"id": pid, **store.progress(pid).to_json()}
        if with_code:
            entry["code"] = _saved_code(store, pid, notes if notes is not None else [])
        puzzles.append(entry)
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": iso_time(time.time() if now is None else now),
        "learner": {"id": learner.id, "name": learner.name},
        "workshop": None if workshop is None else {"title": workshop.title, "puzzles": list(workshop.puzzles)},
        "current_puzzle": store.last_puzzle,
        "app_closed_at": store.closed_at,
        "puzzles": puzzles,
    }


def export_puzzle_ids(store: Store, catalog, workshop=None) -> list[str]:
    """A workshop's puzzles, all of them; otherwise every puzzle this learner has opened, in order."""
    if workshop is not None:
        return list(workshop.puzzles)
    return [pid for pid in catalog.ids() if store.progress(pid) != PuzzleProgress()]


def write_export(path: Path, data: dict) -> None:
    write_atomic(Path(path), (json.dumps(data, indent=2) + "\n").encode("utf-8"))


def _saved_code(store: Store, pid: str, notes: list[str]) -> str | None:
    path = store.code_path(pid)
    try:
        return read_regular(path, CODE_LIMIT).decode("utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        notes.append(f"your code for '{pid}' was left out of the export: {path} {e.strerror or e}")
    except UnicodeDecodeError:
        notes.append(f"your code for '{pid}' was left out of the export: {path} is not UTF-8 text")
    return None


# -- reading ------------------------------------------------------------------------------------


class BadExport(Exception):
    """An export file that cannot be used; the message says why, without the file's name."""


@dataclass(frozen=True)
class PuzzleRecord:
    id: str
    progress: PuzzleProgress


@dataclass(frozen=True)
class LearnerExport:
    path: Path
    learner: Learner
    exported_at: float
    workshop_title: str | None
    workshop_puzzles: tuple[str, ...] | None
    current_puzzle: str | None
    puzzles: tuple[PuzzleRecord, ...]
    app_closed_at: float | None = None  # when the learner's app last closed; None: never, or not recorded

    def record(self, pid: str) -> PuzzleProgress | None:
        return self._records.get(pid)

    @functools.cached_property
    def _records(self) -> dict[str, PuzzleProgress]:
        """By id, the first record of each: the live view and the report look up every learner's every
        puzzle, and a scan of the list each time made a refresh quadratic in the puzzles."""
        out: dict[str, PuzzleProgress] = {}
        for r in self.puzzles:
            out.setdefault(r.id, r.progress)
        return out

    def active_time(self, pid: str) -> float | None:
        """Seconds the learner was at a puzzle (tutor.activity): up to its solution, or, unsolved, so
        far. None when unknown: never opened, or recorded by a gpu-tutor that did not keep it."""
        progress = self.record(pid)
        if progress is None:
            return None
        return progress.active_to_solve_s if progress.solved else progress.active_s

    def on_it_now(self, pid: str, at: float | None = None) -> bool:
        """Whether the learner was on this puzzle when exported ("still on it", tutor.activity), or
        at the moment `at` (the live view's now, for a folder it reads as it changes)."""
        progress = self.record(pid)
        if progress is None:
            return False
        last = parse_iso_time(progress.last_active_at) if progress.last_active_at else None
        return on_it_now(solved=progress.solved, current=self.current_puzzle == pid, last_active=last,
                         has_activity=progress.active_s is not None, closed_at=self.app_closed_at,
                         at=self.exported_at if at is None else at)


def read_export(path: Path) -> LearnerExport:
    """One export file, checked whole. Raises BadExport."""
    return export_from(_parsed(Path(path)), Path(path))


def export_from(raw, path: Path) -> LearnerExport:
    """An export's parsed JSON, checked whole (from a file, or built from a data folder). Raises BadExport."""
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise BadExport("is not a gpu-tutor progress export (no \"format\": \"gpu-tutor-progress\")")
    if raw.get("version") != VERSION:
        raise BadExport(f"has version {_shown(raw.get('version'))}; this gpu-tutor reads version {VERSION}")
    learner = raw.get("learner")
    if not isinstance(learner, dict) or not isinstance(learner.get("id"), str) or not learner["id"]:
        raise BadExport("learner.id: missing")
    if len(learner["id"]) > MAX_ID:
        raise BadExport(f"learner.id: {len(learner['id'])} characters, more than any id gpu-tutor writes")
    name = learner.get("name")
    if name is not None and not isinstance(name, str):
        raise BadExport(f"learner.name: must be text or null, not {_shown(name)}")
    exported = parse_iso_time(raw["exported_at"]) if isinstance(raw.get("exported_at"), str) else None
    if exported is None:
        raise BadExport("exported_at: missing or not an ISO time")
    title, order = _workshop(raw.get("workshop"))
    current = raw.get("current_puzzle")
    if current is not None and not _is_id(current):
        raise BadExport(f"current_puzzle: must be a puzzle id or null, not {_shown(current)}")
    closed = raw.get("app_closed_at")  # absent from exports older than active time
    closed_at = parse_iso_time(closed) if isinstance(closed, str) else None
    if closed is not None and closed_at is None:
        raise BadExport(f"app_closed_at: must be an ISO time or null, not {_shown(closed)}")
    return LearnerExport(Path(path), Learner(learner["id"], name or None), exported, title, order, current,
                         _puzzles(raw.get("puzzles")), closed_at)


def _parsed(path: Path):
    try:
        return loads_strict(read_regular(path, EXPORT_LIMIT).decode("utf-8"))
    except FileNotFoundError:
        raise BadExport("no such file") from None
    except IsADirectoryError:
        raise BadExport("is a folder, not an export file") from None
    except UnreadableFile as e:  # a link, a pipe, a device, too large: it says which, and what to do
        raise BadExport(e.strerror) from None
    except OSError as e:
        raise BadExport(f"cannot be read ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise BadExport("is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise BadExport(f"is not valid JSON ({e.msg}, line {e.lineno}); cut short while copying?") from None
    except NotOurJSON as e:
        raise BadExport(f"{e}: edited since gpu-tutor wrote it? ask the learner for a fresh `gpu-tutor export`") \
            from None
    except RecursionError:
        raise BadExport("is not an export file (nested too deeply)") from None


def _workshop(raw) -> tuple[str | None, tuple[str, ...] | None]:
    if raw is None:
        return None, None
    if (not isinstance(raw, dict) or not isinstance(raw.get("title"), str)
            or not isinstance(raw.get("puzzles"), list) or not all(_is_id(p) for p in raw["puzzles"])):
        raise BadExport("workshop: must be null or {\"title\": text, \"puzzles\": [ids]}")
    if len(raw["puzzles"]) > MAX_PUZZLES:
        raise BadExport(f"workshop.puzzles: lists {len(raw['puzzles'])} puzzles, more than any workshop has "
                        f"(at most {MAX_PUZZLES})")
    return raw["title"], tuple(dict.fromkeys(raw["puzzles"]))  # a puzzle listed twice is one puzzle


def _puzzles(raw) -> tuple[PuzzleRecord, ...]:
    if not isinstance(raw, list):
        raise BadExport("puzzles: missing or not a list")
    if len(raw) > MAX_PUZZLES:
        raise BadExport(f"puzzles: holds {len(raw)} records, more than gpu-tutor has puzzles (at most {MAX_PUZZLES})")
    records = []
    for n, entry in enumerate(raw):
        if not isinstance(entry, dict) or not _is_id(entry.get("id")):
            raise BadExport(f"puzzles[{n}]: not a puzzle record with an id (of at most {MAX_ID} characters)")
        missing = [k for k in _FIELDS if k not in entry]
        if missing:
            raise BadExport(f"puzzles[{n}] ({entry['id']}): missing {', '.join(missing)}")
        try:
            progress = PuzzleProgress.from_json({k: v for k, v in entry.items() if k not in ("id", "code")})
        except (ValueError, TypeError) as e:
            raise BadExport(f"puzzles[{n}] ({entry['id']}): {_cut(str(e))} is not a valid value") from None
        records.append(PuzzleRecord(entry["id"], progress))
    return tuple(records)


def _is_id(value) -> bool:
    """A puzzle id as a file may hold one: text, and short (it heads a column of every table)."""
    return isinstance(value, str) and len(value) <= MAX_ID


def _shown(value) -> str:
    """A value a file held, for a message: as Python writes it, cut short (it may be megabytes)."""
    return _cut(repr(value))


def _cut(text: str, most: int = 120) -> str:
    return text if len(text) <= most else text[:most - 1] + "…"


def utc_text(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
