"""Who this data folder belongs to, so a facilitator's class table can say who is where.

A workshop may ask each learner's name once; it is kept beside their progress, in
DATA/learner.json, and put on their export. Every data folder also gets a random id the first time
it is asked for one, so that exports from learners who gave no name still count as different
people (and the same learner exporting twice counts once). Nothing else about the learner is kept.
"""

from __future__ import annotations

import json
import re
import secrets
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from tutor.store import loads_strict, read_regular, write_atomic

FILE_NAME = "learner.json"
MAX_NAME = 60
FILE_LIMIT = 64 * 1024  # an id and a name of 60 characters
# Ours are learner-<8 hex digits>; anything else plain enough to print and to put in a file name.
PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class Learner:
    id: str
    name: str | None = None

    @property
    def label(self) -> str:
        """The name when there is one, else the anonymous id."""
        return self.name or self.id


def load_learner(root: Path, *, save: bool = True, fallback_id: str | None = None) -> Learner:
    """This folder's learner; an id is made (and saved, where the folder is writable, unless `save`
    is False: the folder is someone else's) on first use, and again in place of one that is not
    plain letters, digits and dashes (it goes on every table). `fallback_id` is used instead of a
    made-up one where the folder is only read: a live view reads it again and again, and a new
    random id each time would be a new learner each time."""
    path = Path(root) / FILE_NAME
    raw = {}
    try:
        raw = loads_strict(read_regular(path, FILE_LIMIT).decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # ValueError: bad JSON or bad UTF-8
        pass
    if not isinstance(raw, dict):
        raw = {}
    learner_id = raw.get("id") if isinstance(raw.get("id"), str) and PLAIN_ID.fullmatch(raw["id"]) else None
    name = raw.get("name") if isinstance(raw.get("name"), str) else None
    if name is not None and check_name(name)[1] is not None:
        name = None
    if learner_id is None and fallback_id is not None:
        return Learner(fallback_id, name)
    if learner_id is None:
        learner_id = f"learner-{secrets.token_hex(4)}"
        if save:
            _save(path, Learner(learner_id, name))
    return Learner(learner_id, name)


def save_name(root: Path, text: str) -> Learner:
    """Keep the learner's name. Raises ValueError with a message fit to show when it will not do,
    and OSError when the folder cannot be written."""
    name, problem = check_name(text)
    if problem:
        raise ValueError(problem)
    learner = Learner(load_learner(root).id, name)
    _save(Path(root) / FILE_NAME, learner, must=True)
    return learner


def check_name(text: str) -> tuple[str, str | None]:
    """(the cleaned name, None) or (text, what is wrong with it)."""
    name = " ".join(text.split())
    if not name:
        return text, "Type your name (or a nickname) so your facilitator can find you in the class table."
    if len(name) > MAX_NAME:
        return text, f"Please keep it under {MAX_NAME} characters."
    if any(unicodedata.category(c).startswith("C") for c in name):
        return text, "Letters, digits, spaces and punctuation only, please."
    if name[0] in "=+-@":  # the class table's CSV would be a formula in a spreadsheet
        return text, f"Please start your name with a letter or a digit, not {name[0]!r}."
    return name, None


def _save(path: Path, learner: Learner, must: bool = False) -> None:
    data = (json.dumps({"id": learner.id, "name": learner.name}, indent=2) + "\n").encode("utf-8")
    try:
        write_atomic(path, data)
    except OSError:
        if must:
            raise
