"""A served room's keys, kept in DATA/room-keys.json so that its links survive a restart.

Three keys, made together and rotated together (`serve --new-token`):
- **the token**, in the link handed to learners (and then in their room cookie);
- **the secret** that signs each learner's cookie (room.py), so only the room makes learners;
- **the facilitator's token**, in the facilitator's own link (/facilitator?token=...), which opens the
  room view and nothing else. Learners never see it: the facilitator's link is printed apart, the
  facilitator's cookie is sent to /facilitator alone, and it is never the learners' token (a file
  where they are the same gets a new facilitator's token).

The file is the facilitator user's alone (0600). A file written before the room had a facilitator's
view holds only the first two: it gains a facilitator's token, and the learners' token and secret are
kept, so every learner's link and cookie keeps working.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

KEYS_FILE = "room-keys.json"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,}")


@dataclass(frozen=True)
class RoomKeys:
    token: str        # the learners' link and room cookie
    secret: bytes     # signs the learner cookies the room issues
    facilitator: str  # the facilitator's link and cookie: the room view, never a learner's app
    state: str        # "kept", "new", "rotated", or "facilitator added" (an older file: learners' keys kept)


def new_token() -> str:
    return secrets.token_urlsafe(18)


def room_keys(root: Path, rotate: bool = False) -> RoomKeys:
    """The room's keys as kept in its folder, or new ones when there are none, they cannot be read,
    or `rotate` asks for new ones; a kept file without a facilitator's token gains one."""
    path = root / KEYS_FILE
    kept = None if rotate else _read(path)
    if kept is not None and kept.state == "kept":
        return kept
    if kept is not None:
        keys = RoomKeys(kept.token, kept.secret, new_token(), "facilitator added")
    else:
        token = new_token()
        keys = RoomKeys(token, secrets.token_bytes(32), new_token(), "rotated" if rotate else "new")
    _write(path, keys)
    return keys


def _read(path: Path) -> RoomKeys | None:
    """The kept keys (state "kept"; "facilitator added" where the file has no usable facilitator's
    token, its facilitator field then empty), or None where the learners' keys cannot be read."""
    from tutor.store import read_regular

    try:
        kept = json.loads(read_regular(path, 4096).decode("utf-8"))
        token, secret = kept["token"], base64.urlsafe_b64decode(kept["secret"])
        if not (isinstance(token, str) and _TOKEN.fullmatch(token) and len(secret) >= 32):
            return None
        facilitator = kept.get("facilitator_token")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if isinstance(facilitator, str) and _TOKEN.fullmatch(facilitator) and facilitator != token:
        return RoomKeys(token, secret, facilitator, "kept")
    return RoomKeys(token, secret, "", "facilitator added")


def _write(path: Path, keys: RoomKeys) -> None:
    from tutor.store import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"token": keys.token, "secret": base64.urlsafe_b64encode(keys.secret).decode(),
            "facilitator_token": keys.facilitator}
    write_atomic(path, (json.dumps(data) + "\n").encode("utf-8"))  # made 0600 (mkstemp), and kept so:
    os.chmod(path, 0o600)
