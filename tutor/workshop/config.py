"""A workshop file: one TOML file in which a facilitator decides what a room of learners sees.

`gpu-tutor --workshop FILE` (or `GPU_TUTOR_WORKSHOP=FILE`, set once for every SSH session) opens
the app on the workshop's puzzles only, in the workshop's order, under its title, with its solution
and hint policies and its default backend. The file wins over each learner's own settings: with
`hints = "authored"` no model is configured at all, so nothing imports litellm or opens a socket,
whatever a learner's config file says; with `hints = "ai"` the model must be served on this machine
or the local network, and the settings are offline, so that endpoint is the only one ever used.

Every mistake in the file is reported with the file, the key, what is allowed and what to do, before
the app opens. Nothing here imports numba, litellm or textual.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tutor.ai.config import AISettings, ConfigError, is_local_url, is_own_server_url
from ..engine.process.gpulock import DEFAULT_TURNS, MAX_TURNS
from tutor.puzzles import Catalog, Track
from tutor.textsafe import has_unsafe
from tutor.tomlfile import TomlFileError, read_toml

WORKSHOP_ENV = "GPU_TUTOR_WORKSHOP"
SOLUTIONS = ("never", "after-solving", "always")
HINTS = ("authored", "ai")
BACKENDS = ("auto", "sim", "gpu")

EXAMPLE = """\
# A gpu-tutor workshop. Learners start it with:  gpu-tutor --workshop workshop.toml
# (or set GPU_TUTOR_WORKSHOP=/path/to/workshop.toml for every session, e.g. in /etc/profile.d/).
# Check it with:  gpu-tutor workshop check workshop.toml

title = "GPU programming in two hours"

# Which puzzles, in this order (ids from `gpu-tutor list`). Learners see only these.
puzzles = ["map", "zip", "guard", "map2d", "broadcast", "blocks", "shared", "dot"]

# When a learner may open the reference solution (F3):
#   "never", "after-solving" (once they have passed the puzzle), or "always"
solutions = "after-solving"

# Hints: "authored" (the puzzles' own hint ladder; nothing touches the network)
#        "ai" (a model served on this machine or your local network; needs [ai] below)
hints = "authored"

# Where kernels run by default: "auto" (a GPU when the machine has one, else the simulator),
# "sim" (our tracing CPU simulator, any laptop) or "gpu" (a CUDA GPU). Learners may still switch (F8).
backend = "auto"

# Ask each learner's name once (kept in their data folder) so `gpu-tutor export` can put it on their
# progress file; without it, exports carry an anonymous id.
ask_name = true

# On one shared GPU server, GPU runs take turns through a lock in this folder (every learner must be
# able to write to it; keep it on a local disk). Default: gpu-tutor-gpu-queue in the temporary folder.
# gpu_queue = "/tmp/gpu-tutor-gpu-queue"

# How many GPU runs may be on the GPU at once (1 to 16; default 4). Each run may claim up to
# GPU_TUTOR_GPU_MEMORY_MB (2048) of GPU memory beside every learner's CUDA context (about 0.7 GB
# each): on a GPU with less room than turns x 2 GB, lower it; 1 is one run at a time.
# gpu_turns = 1

# Whether you, the facilitator, may read learners' kernels in `gpu-tutor room DIR` (Enter on a
# shared mistake shows one of the learners' code with the failing line marked). Their code is their
# own: off unless you say so here, and tell the room when you turn it on.
# facilitator_sees_code = false

# Only with hints = "ai": a model server on this machine or the local network (an IP address or
# localhost, never a host name: that would need DNS). Keys are never kept here.
# [ai]
# model = "ollama_chat/qwen2.5-coder:7b"
# api_base = "http://192.168.1.10:11434"
# full_code_hints = false    # true: a learner who asks twice past the last hint may see full code
# timeout = 60               # seconds per request
"""

_TOP_KEYS = {"title": str, "puzzles": list, "solutions": str, "hints": str, "backend": str,
             "ask_name": bool, "gpu_queue": str, "gpu_turns": int, "facilitator_sees_code": bool, "ai": dict}
_AI_KEYS = {"model": str, "api_base": str, "full_code_hints": bool, "timeout": (int, float), "max_tokens": int}
_REQUIRED = ("title", "puzzles")


class WorkshopError(ConfigError):
    """A workshop file that cannot be used; the message names the file, the key and the fix."""


@dataclass(frozen=True)
class Workshop:
    path: Path
    title: str
    puzzles: tuple[str, ...]
    solutions: str = "after-solving"
    hints: str = "authored"
    backend: str = "auto"
    ask_name: bool = False
    gpu_queue: str | None = None
    gpu_turns: int | None = None
    facilitator_sees_code: bool = False  # the room view (`gpu-tutor room`) may show learners' code
    ai: dict = field(default_factory=dict)

    def restrict(self, catalog: Catalog) -> Catalog:
        """The catalog as this workshop's learners see it: one track, only its puzzles, its order."""
        track = Track("workshop", self.title, "", list(self.puzzles))
        return Catalog([track], _Only(catalog.puzzles, self.puzzles))

    def ai_settings(self) -> AISettings:
        """The hint settings the workshop imposes: no model (authored hints, no network) or its local
        model, offline."""
        if self.hints == "authored":
            return AISettings(source=f"{self.path} (hints = \"authored\")")
        return AISettings(model=self.ai["model"], api_base=self.ai["api_base"], offline=True,
                          full_code_hints=self.ai.get("full_code_hints", False),
                          timeout=float(self.ai.get("timeout", 60.0)), max_tokens=self.ai.get("max_tokens", 700),
                          source=f"{self.path} [ai]")

    def backend_here(self, gpu_present: bool) -> tuple[str, str | None]:
        """The backend to start on, and a notice when the workshop's wish cannot be met here."""
        if self.backend == "auto":
            return ("gpu" if gpu_present else "sim"), None
        if self.backend == "gpu" and not gpu_present:
            return "sim", ("This workshop runs kernels on a GPU, but this machine has none: "
                           "using the simulator (every check still runs the real compiler).")
        return self.backend, None

    def reference_refusal(self, solved: bool) -> str | None:
        """Why the reference may not be shown now (None: it may)."""
        return reference_refusal(self.solutions, solved)


def reference_refusal(policy: str, solved: bool) -> str | None:
    """The solution policy as one rule, for the app with or without a workshop."""
    if policy == "always":
        return None
    if policy == "never":
        return "Your facilitator has turned reference solutions off for this workshop."
    if solved:
        return None
    return "The reference opens once you have solved this puzzle."


def workshop_path(flag: str | None) -> Path | None:
    """The workshop file in use: --workshop, else $GPU_TUTOR_WORKSHOP, else none."""
    named = flag or os.environ.get(WORKSHOP_ENV, "").strip()
    return Path(named).expanduser() if named else None


def load_workshop(path: str | Path, catalog: Catalog) -> Workshop:
    """Read and validate a workshop file against the puzzles that exist. Raises WorkshopError."""
    path = Path(path)
    try:
        raw = read_toml(path)
    except FileNotFoundError:
        where = f"named by {WORKSHOP_ENV}" if os.environ.get(WORKSHOP_ENV, "").strip() else "given to --workshop"
        raise WorkshopError(f"{path}: no such workshop file ({where}); write an example with "
                            f"`gpu-tutor workshop init {path}`") from None
    except TomlFileError as e:
        raise WorkshopError(f"{path}: {e}") from None
    except OSError as e:
        raise WorkshopError(f"{path}: cannot be read: {e.strerror or e}") from None
    return workshop_from_dict(raw, path, catalog)


def workshop_from_dict(raw: dict, path: Path, catalog: Catalog) -> Workshop:
    def fail(key: str, problem: str) -> WorkshopError:
        return WorkshopError(f"{path}: {key}: {problem}")

    for key, value in raw.items():
        if key not in _TOP_KEYS:
            raise fail(key, f"unknown key; allowed: {', '.join(_TOP_KEYS)} (see `gpu-tutor workshop init`)")
        _check_type(fail, key, value, _TOP_KEYS[key])
    for key in _REQUIRED:
        if key not in raw:
            raise fail(key, "missing; every workshop file needs a title and a list of puzzles")
    title = raw["title"].strip()
    if not title:
        raise fail("title", "must not be empty")
    if has_unsafe(title):  # it heads every learner's screen: an escape there would drive their terminal
        raise fail("title", f"{title!r} holds control characters; use letters, digits, spaces and punctuation")
    puzzles = _puzzle_ids(fail, raw["puzzles"], catalog)
    values = {}
    for key, allowed in (("solutions", SOLUTIONS), ("hints", HINTS), ("backend", BACKENDS)):
        if key in raw:
            if raw[key] not in allowed:
                raise fail(key, f"{raw[key]!r} is not allowed; use one of: "
                                f"{', '.join(repr(a) for a in allowed)}")
            values[key] = raw[key]
    ai = _ai_table(fail, raw.get("ai"), values.get("hints", "authored"))
    gpu_queue = raw.get("gpu_queue")
    if gpu_queue is not None and not gpu_queue.strip():
        raise fail("gpu_queue", "must be a folder path (or leave the key out for the default)")
    gpu_turns = raw.get("gpu_turns")
    if gpu_turns is not None and not 1 <= gpu_turns <= MAX_TURNS:
        raise fail("gpu_turns", f"{gpu_turns} is not allowed; use a whole number from 1 to {MAX_TURNS}: how many "
                                f"GPU runs may be on the GPU at once ({DEFAULT_TURNS}, the default; 1: one at a time)")
    return Workshop(path=path, title=title, puzzles=puzzles, ask_name=raw.get("ask_name", False),
                    gpu_queue=gpu_queue, gpu_turns=gpu_turns, ai=ai,
                    facilitator_sees_code=raw.get("facilitator_sees_code", False), **values)


def _not_offline(api_base: str) -> str:
    """Why a workshop cannot use this api_base. A workshop is offline, and offline means no DNS: a
    name only your network knows (`gpu-box`, `lab.local`) may well be a server of your own (tutor.ai's
    settings send it no key for that reason), but finding it is a network lookup."""
    if is_own_server_url(api_base):
        return (f"{api_base!r} names your server by a host name, which takes a DNS lookup, and a workshop is offline; "
                "give its IP address instead, such as http://192.168.1.10:11434, or localhost")
    return (f"{api_base!r} is not on this machine or the local network; a workshop is offline, so use localhost or "
            "an IP address such as http://192.168.1.10:11434")


def _check_type(fail, key: str, value, kind) -> None:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        names = {str: "a string", list: "a list", bool: "true or false", dict: "a table ([ai])",
                 int: "a number", float: "a number"}
        what = "a whole number" if kinds == (int,) else names[kinds[0]]  # 2.5 is a number, just not one of these
        raise fail(key, f"must be {what}, not {value!r}")


def _puzzle_ids(fail, ids: list, catalog: Catalog) -> tuple[str, ...]:
    if not ids:
        raise fail("puzzles", "the list is empty; name at least one puzzle (ids from `gpu-tutor list`)")
    known = catalog.ids()
    seen = []
    for n, pid in enumerate(ids, 1):  # counted as `workshop check` lists them: the first is #1
        if not isinstance(pid, str):
            raise fail(f"puzzles #{n}", f"must be a puzzle id in quotes, not {pid!r}")
        if pid not in known:
            raise fail(f"puzzles #{n}", f"no puzzle {pid!r}; allowed: {', '.join(known)}")
        if pid in seen:
            raise fail(f"puzzles #{n}", f"{pid!r} is listed twice (first as #{seen.index(pid) + 1}); list each "
                                        "puzzle once")
        seen.append(pid)
    return tuple(seen)


def _ai_table(fail, table: dict | None, hints: str) -> dict:
    if hints == "authored":
        if table:
            raise fail("ai", "only used with hints = \"ai\"; remove the [ai] table or set hints = \"ai\"")
        return {}
    table = table or {}
    for key, value in table.items():
        if key in ("api_key", "key", "token"):
            raise fail(f"ai.{key}", "keys are never kept in files; a local server needs none, or export "
                                    "the variable your server reads")
        if key not in _AI_KEYS:
            raise fail(f"ai.{key}", f"unknown key; allowed: {', '.join(_AI_KEYS)}")
        _check_type(fail, f"ai.{key}", value, _AI_KEYS[key])
    for key in ("model", "api_base"):
        if not table.get(key, "").strip():
            raise fail(f"ai.{key}", "missing; hints = \"ai\" needs [ai] model and api_base (a server on this "
                                    "machine or the local network), or use hints = \"authored\"")
    if not is_local_url(table["api_base"]):
        raise fail("ai.api_base", _not_offline(table["api_base"]))
    if "timeout" in table and table["timeout"] <= 0:
        raise fail("ai.timeout", "must be more than 0 seconds")
    if "max_tokens" in table and table["max_tokens"] < 1:
        raise fail("ai.max_tokens", "must be at least 1")
    return dict(table)


class _Only(dict):
    """The catalog's puzzles, but only the workshop's: anything else is unknown to the app."""

    def __init__(self, puzzles, allowed: tuple[str, ...]):
        super().__init__()
        self._puzzles = puzzles
        self._allowed = allowed

    def __missing__(self, pid):
        if pid not in self._allowed:
            raise KeyError(pid)
        puzzle = self[pid] = self._puzzles[pid]
        return puzzle

    def __contains__(self, pid):
        return pid in self._allowed

    def __iter__(self):
        return iter(self._allowed)

    def __len__(self):
        return len(self._allowed)

    def get(self, pid, default=None):
        return self[pid] if pid in self._allowed else default
