"""The facilitator's message to the room: one small file every learner's app looks at.

A break, a hint for everyone, "five more minutes": the room view (`gpu-tutor room DIR`) writes it
to DATA/room-message.json, whole or not at all (write_atomic), as {"id", "text", "at", "earlier": [the
few sent before it, oldest first]}; `gpu-tutor serve` tells each learner's app where that file is
(tutor.session.ROOM_MESSAGE_ENV), and the app looks every few seconds and shows each message it has
not shown before once, as a notice from the facilitator. The file keeps the earlier ones because an
app looks only every few seconds: "Break until 10:30" and, a second later, "dot: a barrier before the
sum" must both reach it, and a file of the newest alone lost the first.

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
KEPT = 5              # messages the file holds: the newest and those sent before it


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
    earlier = read_messages(room / MESSAGE_FILE)[-(KEPT - 1):]
    while True:  # the earlier ones, as many of the last few as the size an app reads allows
        data = json.dumps({"id": mid, "text": text, "at": iso_time(now),
                           "earlier": [{"id": m.id, "text": m.text, "at": iso_time(m.at)} for m in earlier]},
                          ensure_ascii=False) + "\n"
        if len(data.encode("utf-8")) <= MESSAGE_LIMIT or not earlier:
            break
        earlier = earlier[1:]
    write_atomic(room / MESSAGE_FILE, data.encode("utf-8"))
    return RoomMessage(mid, terminal_safe(text), now)  # as the learners' apps will show it


def read_message(path: Path) -> RoomMessage | None:
    """The newest message in `path`, or None for a file that is missing or not a message as we write one."""
    messages = read_messages(path)
    return messages[-1] if messages else None


def read_messages(path: Path) -> list[RoomMessage]:
    """The messages in `path`, oldest first, the newest last; none for a file that is missing or not
    one we write (an earlier message that is not one is left out)."""
    try:
        raw = loads_strict(read_regular(path, MESSAGE_LIMIT).decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # UnicodeDecodeError and JSON's errors are ValueErrors
        return []
    newest = _message(raw)
    if newest is None:
        return []
    earlier = raw.get("earlier")
    earlier = [m for m in map(_message, earlier[-(KEPT - 1):]) if m is not None] if isinstance(earlier, list) else []
    unique = {m.id: m for m in earlier if m.id != newest.id}  # an id twice (an edited file) is one message
    return [*unique.values(), newest]


def _message(raw) -> RoomMessage | None:
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
    """The learner's side: `check()` every few seconds gives the messages not shown before, oldest first.

    Cheap when nothing changed, which is nearly always: one stat. The first check lets through only
    messages sent in the last FRESH_S (an app opened after the break was announced has no use for
    the announcement an hour later)."""

    def __init__(self, path: Path | str, clock):
        self.path = Path(path)
        self.clock = clock
        self._seen: set[str] = set()
        self._signature: tuple | None = None
        self._first = True

    def check(self) -> list[RoomMessage]:
        first, self._first = self._first, False
        try:
            s = os.stat(self.path, follow_symlinks=False)
            signature = (s.st_size, s.st_mtime_ns, s.st_ino)
        except OSError:
            signature = None
        if signature == self._signature:
            return []
        self._signature = signature
        if signature is None:
            return []
        new = [m for m in read_messages(self.path) if m.id not in self._seen]
        self._seen.update(m.id for m in new)
        if first:
            now = self.clock()
            new = [m for m in new if now - m.at <= FRESH_S]
        return new
