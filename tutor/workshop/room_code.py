"""Whether the facilitator may read a learner's kernel, and the kernel when they may.

A learner's code is their own. In a served room the workshop file decides (`facilitator_sees_code
= true`, which `gpu-tutor serve` writes into DATA/room.json); a folder of export files shows the
code an export carries, which is only there when the learner (or whoever exported) asked for it
with `gpu-tutor export --with-code`. Anything else, one learner's data folder included, shows none.
Whatever is hidden, the screen says why, so a facilitator never mistakes "not allowed" for "none".

The code is read as everything of a learner's is: through read_regular (a link is not followed, a
pipe not waited on, a huge file not read), from a folder that is checked to be a folder and not a
link to one, under a name made only from a plain puzzle id. Nothing is executed or written.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from tutor.store import MB, loads_strict, read_regular
from .folders import ROOM_FILE
from .learner import FILE_NAME, PLAIN_ID

CODE_KEY = "facilitator_sees_code"  # in a workshop file and in the room.json `gpu-tutor serve` writes
KERNEL_LIMIT = 256 * 1024  # a kernel shown on screen: a puzzle's solution is a few KB
EXPORT_READ_LIMIT = 4 * MB  # tutor.workshop.export's own cap on an export file


@dataclass(frozen=True)
class CodePolicy:
    where: str     # "room" (a served room's folders), "exports" (what each export carries), "none"
    allowed: bool
    why: str       # said on screen, shown or hidden


@dataclass(frozen=True)
class Kernel:
    text: str | None  # the learner's code as saved (not yet made terminal-safe), or None
    why: str | None   # why there is none to show


def code_policy(path: Path) -> CodePolicy:
    """What the room at `path` lets its facilitator read."""
    path = Path(path)
    if (path / "learners").is_dir():
        try:
            raw = loads_strict(read_regular(path / ROOM_FILE, MB).decode("utf-8"))
        except (OSError, ValueError, RecursionError):
            return CodePolicy("room", False, f"code is hidden: {ROOM_FILE} cannot be read, so the room's choice "
                                             "is not known (gpu-tutor serve writes it)")
        if isinstance(raw, dict) and raw.get(CODE_KEY) is True:
            return CodePolicy("room", True, f"code is shown: the room's workshop file sets {CODE_KEY} = true")
        return CodePolicy("room", False, f"code is hidden: the room's workshop file does not set {CODE_KEY} = true "
                                         "(a learner's code is their own unless the room says so)")
    if path.is_dir() and ((path / "state.json").exists() or (path / FILE_NAME).exists()):
        return CodePolicy("none", False, "code is hidden: one learner's data folder is not a room; code shows for a "
                                         f"served room that sets {CODE_KEY} = true, or from exports made with "
                                         "`gpu-tutor export --with-code`")
    return CodePolicy("exports", True, "code shows where a learner's export carries it "
                                       "(`gpu-tutor export --with-code`)")


def kernel_of(source: Path, puzzle: str, policy: CodePolicy) -> Kernel:
    """The code of the learner whose data folder (or export file) is `source`, for `puzzle`."""
    if not policy.allowed:
        return Kernel(None, policy.why)
    if not PLAIN_ID.fullmatch(puzzle):
        return Kernel(None, "not a puzzle id this room knows")
    if policy.where == "exports":
        return _exported(Path(source), puzzle)
    return _saved(Path(source), puzzle)


def _saved(folder: Path, puzzle: str) -> Kernel:
    for part in (folder, folder / "code"):
        try:
            mode = os.lstat(part).st_mode
        except FileNotFoundError:
            return Kernel(None, "no code saved for this puzzle")
        except OSError as e:
            return Kernel(None, f"their code cannot be read ({e.strerror or e})")
        if stat.S_ISLNK(mode):
            return Kernel(None, f"{part.name} is a link: not followed")
        if not stat.S_ISDIR(mode):
            return Kernel(None, f"{part.name} is not a folder")
    try:
        data = read_regular(folder / "code" / f"{puzzle}.py", KERNEL_LIMIT)
    except FileNotFoundError:
        return Kernel(None, "no code saved for this puzzle")
    except OSError as e:  # UnreadableFile says which: a link, a pipe, too large (and, after ";", the owner's fix)
        return Kernel(None, f"their code file {str(e.strerror or e).split(';')[0]}")
    try:
        return Kernel(data.decode("utf-8"), None)
    except UnicodeDecodeError:
        return Kernel(None, "their code file is not UTF-8 text")


def _exported(path: Path, puzzle: str) -> Kernel:
    try:
        raw = loads_strict(read_regular(path, EXPORT_READ_LIMIT).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return Kernel(None, "their export file cannot be read again")
    entries = raw.get("puzzles") if isinstance(raw, dict) else None
    entry = next((e for e in entries if isinstance(e, dict) and e.get("id") == puzzle), None) \
        if isinstance(entries, list) else None
    code = entry.get("code") if entry else None
    if not isinstance(code, str):
        return Kernel(None, "their export carries no code (`gpu-tutor export --with-code` adds it)")
    if len(code) > KERNEL_LIMIT:
        return Kernel(None, "their exported code is too large to show")
    return Kernel(code, None)
