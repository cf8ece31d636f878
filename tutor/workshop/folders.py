"""The class report straight from learners' data folders: a served room's (gpu-tutor serve keeps one
per browser under DIR/learners), or any one learner's folder, with no export step.

A folder is read as its owner's app would read it, but never written: the app may be running and
saving at this moment, so nothing is swept, moved aside or given an id (tutor.store's read_only).
Each folder becomes the same export `gpu-tutor export` would write, checked by the same reader, so
a folder and a file can never disagree on what a progress record is.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from tutor.store import MB, Store, loads_strict, read_regular
from .export import MAX_PUZZLES, BadExport, LearnerExport, build_export, export_from, export_puzzle_ids
from .learner import FILE_NAME, PLAIN_ID, load_learner

ROOM_FILE = "room.json"  # written by `gpu-tutor serve` (tutor.serve.room): the room's title and puzzles


@dataclass(frozen=True)
class RoomDescription:
    title: str
    puzzles: tuple[str, ...]


def sources(path: Path, notes: list[str]) -> list[tuple[Path, object]]:
    """What one argument of `report` stands for: [(path, a callable giving its LearnerExport)], or
    [(path, BadExport)] when it is none of an export, a data folder, a served room, a folder of exports."""
    from .export import read_export

    if not path.is_dir():
        return [(path, lambda: read_export(path))]
    learners = path / "learners"
    if learners.is_symlink():  # `serve` makes a folder: a link may lead anywhere, / included
        return [(learners, BadExport("is a link, not a served room's own learners folder: not followed"))]
    if learners.is_dir():  # a served room
        room = _room(path)
        if room is None:
            notes.append(f"{path / ROOM_FILE} is missing or unreadable: each learner's opened puzzles are shown")
        names = sorted(entry.name for entry in _entries(learners) if entry.is_dir(follow_symlinks=False))
        folders = [learners / name for name in names]
        if not folders:
            return [(path, BadExport("is a served room with no learners yet"))]
        return [(folder, lambda folder=folder: from_folder(folder, room, notes)) for folder in folders]
    if (path / "state.json").exists() or (path / FILE_NAME).exists():  # one learner's data folder
        return [(path, lambda: from_folder(path, None, notes))]
    exports = sorted(p for p in path.glob("*.json"))
    if exports:
        return [(p, lambda p=p: read_export(p)) for p in exports]
    return [(path, BadExport("is a folder with no export files, learner folders or progress in it"))]


def stray_entries(root: Path) -> list[tuple[str, str]]:
    """What a served room's learners/ holds besides learners' folders, by name, each with why it is
    left out: links (never followed) and anything not a folder. `sources` leaves them out; the live
    view says so. Names, not paths: there may be a hundred thousand of them to sort."""
    learners = Path(root) / "learners"
    if learners.is_symlink() or not learners.is_dir():
        return []
    out = []
    for entry in _entries(learners):
        if entry.is_symlink():
            out.append((entry.name, "is a link, not a learner's folder: left out (never followed)"))
        elif not entry.is_dir(follow_symlinks=False):
            out.append((entry.name, "is not a folder: left out"))
    return sorted(out)


def _entries(folder: Path) -> list[os.DirEntry]:
    """A folder's entries, their kinds read from the listing itself: a stat per entry, twice, made a
    folder of a hundred thousand stray files cost seconds on every refresh of the live view."""
    with os.scandir(folder) as it:
        return list(it)


def from_folder(folder: Path, room: RoomDescription | None, notes: list[str] | None = None) -> LearnerExport:
    """A learner's data folder as an export, read only."""
    from tutor.puzzles import load_catalog

    store = Store(folder, read_only=True)
    learner = load_learner(folder, save=False, fallback_id=folder_id(folder.name))
    ids = list(room.puzzles) if room else export_puzzle_ids(store, load_catalog(on_demand=True))
    data = build_export(store, learner, ids, workshop=room)
    if notes is not None:
        notes += [f"{folder}: {notice}" for notice in store.notices]
    return export_from(data, folder)


def folder_id(name: str) -> str:
    """The id of a learner's folder with none of its own (no learner.json yet, or an id in it that
    is not plain): its name where that is plain, else one made from the name, so that two odd
    names are two learners and the same folder is the same learner on every read."""
    if PLAIN_ID.fullmatch(name):
        return name
    return f"folder-{hashlib.sha256(os.fsencode(name)).hexdigest()[:8]}"


def _room(root: Path) -> RoomDescription | None:
    try:
        raw = loads_strict(read_regular(root / ROOM_FILE, MB).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("title"), str) or not isinstance(raw.get("puzzles"), list):
        return None
    if len(raw["puzzles"]) > MAX_PUZZLES:  # `serve` writes a workshop's list: this one was edited
        return None
    # a puzzle listed twice (an edited file) is one puzzle, one column
    puzzles = tuple(dict.fromkeys(p for p in raw["puzzles"] if isinstance(p, str) and PLAIN_ID.fullmatch(p)))
    if not puzzles:  # a room of no puzzle would show every learner with none, and say nothing of why
        return None
    return RoomDescription(raw["title"], puzzles)
