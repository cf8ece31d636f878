"""The facilitator's message to the room: one small file every learner's app looks at.

A break, a hint for everyone, "five more minutes": the room view (`gpu-tutor room DIR`) writes it
to DATA/room-message.json, whole or not at all (write_atomic), as {"id", "text", "at"}; `gpu-tutor
serve` tells each learner's app where that file is (tutor.session.ROOM_MESSAGE_ENV), and the app looks every few
seconds and shows a message it has not shown before once, as a notice from the facilitator.

The learner's app reads a file it did not write, in a room of other people's apps, so it trusts
nothing in it: it only stats the file until its size or time changes, reads at most MESSAGE_LIMIT
bytes through read_regular (no link followed, no pipe waited on), takes strict JSON only, and shows
the text made terminal-safe and cut to MAX_TEXT characters. A missing, half-typed or hostile file
is no message, silently: a learner is never told about a file they have nothing to do with.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from tutor.store import loads_strict, iso_time, parse_iso_time, read_regular, write_atomic
from tutor.textsafe import terminal_safe

MESSAGE_FILE = "room-message.json"
MAX_TEXT = 500        # characters a message shows at most: a notice, not a lesson
MESSAGE_LIMIT = 16 * 1024  # bytes the app reads at most (500 characters escaped are well under it)
FRESH_S = 15 * 60.0   # an app that opens after a message was sent shows it only if it is this recent


class MessageRefused(Exception):
    """Why a message cannot be sent; said to the facilitator as it is."""


@dataclass(frozen=True)
class RoomMessage:
    id: str
    text: str      # terminal-safe, at most MAX_TEXT characters
    at: float      # when the facilitator sent it


def message_refusal(room: Path) -> str | None:
    """Why `room` cannot take a message (None: it can). Only a served room's learners have an app
    that reads one: a folder of export files has no one listening."""
    if not (room / "learners").is_dir():
        return (f"messages go to a served room's learners; {room} is not one (no learners/ folder): "
                "start the room with `gpu-tutor serve --data DIR` and watch that DIR")
    return None


def send_message(room: Path, text: str, now: float) -> RoomMessage:
    """Write `text` as the room's message, with a fresh id. Raises MessageRefused or OSError."""
    why = message_refusal(room)
    if why:
        raise MessageRefused(why)
    text = text.strip()
    if not text:
        raise MessageRefused("type a message first")
    if len(text) > MAX_TEXT:
        raise MessageRefused(f"a message is at most {MAX_TEXT} characters ({len(text)} typed)")
    mid = secrets.token_hex(8)
    data = json.dumps({"id": mid, "text": text, "at": iso_time(now)}) + "\n"
    write_atomic(room / MESSAGE_FILE, data.encode("utf-8"))
    return RoomMessage(mid, terminal_safe(text), now)  # as the learners' apps will show it


def read_message(path: Path) -> RoomMessage | None:
    """The message in `path`, or None for a file that is missing or not a message as we write one."""
    try:
        raw = loads_strict(read_regular(path, MESSAGE_LIMIT).decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # UnicodeDecodeError and JSON's errors are ValueErrors
        return None
    if not isinstance(raw, dict):
        return None
    mid, text, at = raw.get("id"), raw.get("text"), raw.get("at")
    if not (isinstance(mid, str) and 0 < len(mid) <= 64 and isinstance(text, str) and text.strip()
            and isinstance(at, str)):
        return None
    when = parse_iso_time(at)
    if when is None:
        return None
    return RoomMessage(mid, terminal_safe(text.strip()[:MAX_TEXT]), when)


class MessageWatch:
    """The learner's side: `check()` every few seconds gives a message not shown before, else None.

    Cheap when nothing changed, which is nearly always: one stat. The first check lets through only
    a message sent in the last FRESH_S (an app opened after the break was announced has no use for
    the announcement an hour later)."""

    def __init__(self, path: Path | str, clock):
        self.path = Path(path)
        self.clock = clock
        self._seen: set[str] = set()
        self._signature: tuple | None = None
        self._first = True

    def check(self) -> RoomMessage | None:
        first, self._first = self._first, False
        try:
            s = os.stat(self.path, follow_symlinks=False)
            signature = (s.st_size, s.st_mtime_ns, s.st_ino)
        except OSError:
            signature = None
        if signature == self._signature:
            return None
        self._signature = signature
        if signature is None:
            return None
        message = read_message(self.path)
        if message is None or message.id in self._seen:
            return None
        self._seen.add(message.id)
        if first and self.clock() - message.at > FRESH_S:
            return None
        return message
