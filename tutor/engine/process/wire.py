"""The one answer channel between a sandboxed child and its parent: JSON plus raw numpy buffers.

A child runs code a learner or a model wrote, so whatever it sends is data to be read, never code
to be run: no pickle (a pickle is a program), numpy buffers loaded with `allow_pickle=False`, and
objects rebuilt only for the engine's own plain-data classes, named in an allow-list. Sizes and
nesting are capped so that a hostile child can neither exhaust the parent's memory nor its stack.

A message is: an 8-byte length and a JSON header, then for each array an 8-byte length and the
array in .npy format. Values that JSON has no word for are tagged: {"~t": [...]} a tuple,
{"~d": [[key, value], ...]} a dict (keys may be ints), {"~a": n} the n-th array,
{"~c": "ClassName", "f": {...}} an allow-listed dataclass.
"""

from __future__ import annotations

import dataclasses
import enum
import io
import json
import os
import select
import struct
import time

import numpy as np

LENGTH = struct.Struct("!Q")
MAX_HEADER = 256 << 20
MAX_ARRAY = 4 << 30
MAX_ARRAYS = 4096
MAX_DEPTH = 64
NPY_HEADER = 128  # .npy's own header, per array: what a buffer takes beyond its data
_PLAIN = (str, int, float, bool, type(None))


class WireError(Exception):
    """The other side sent something that is not a message of ours (or sent nothing in time)."""


class WireTimeout(WireError):
    pass


class WireClosed(WireError):
    pass


class WireTooLarge(WireError):
    """More than the reader's limits: refused before it was read."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """The most one message may hold. The parent sets them from what it asked for (the outputs of a
    check), so that what a hostile child sends is refused at its length, never read into memory."""

    header: int = MAX_HEADER
    arrays: int = MAX_ARRAYS
    array_bytes: int = MAX_ARRAY * MAX_ARRAYS

    @classmethod
    def of(cls, header_mb: int, array_sizes=()) -> Limits:
        """A header of `header_mb` and the arrays of these sizes in bytes (each with its .npy header)."""
        sizes = list(array_sizes)
        return cls(header=header_mb << 20, arrays=len(sizes), array_bytes=sum(sizes) + NPY_HEADER * len(sizes))


# -- the classes a message may hold ----------------------------------------------------------------
def _classes() -> dict:
    from tutor.puzzles import LaunchConfig
    from ..verdict import CheckResult, ConfigRun
    from ..trace import ArrayInfo, BarrierRecord, Trace
    from ..verdict import ConfigResult, Failure, Verdict

    return {c.__name__: c for c in (Verdict, Failure, ConfigResult, CheckResult, ConfigRun, LaunchConfig,
                                    Trace, ArrayInfo, BarrierRecord)}


_CLASSES: dict = {}


def classes() -> dict:
    if not _CLASSES:
        _CLASSES.update(_classes())
    return _CLASSES


# -- writing ---------------------------------------------------------------------------------------
def send(fd: int, header, arrays: list | None = None, deadline: float | None = None) -> None:
    """Write one message to a file descriptor. `header` may hold arrays and allow-listed objects;
    they are carried as tagged values (and `arrays` extends the buffer list for raw arrays).
    Past `deadline` (time.monotonic) a reader that stopped reading is a WireTimeout, not a hang."""
    buffers = list(arrays or [])
    body = json.dumps(_encode(header, buffers, 0), separators=(",", ":"), default=_as_text).encode()
    parts = [LENGTH.pack(len(body)), body, LENGTH.pack(len(buffers))]
    for a in buffers:
        out = io.BytesIO()
        np.save(out, np.ascontiguousarray(a), allow_pickle=False)
        data = out.getvalue()
        parts += [LENGTH.pack(len(data)), data]
    _write_all(fd, b"".join(parts), deadline)


def _encode(obj, buffers: list, depth: int):
    if depth > MAX_DEPTH:
        raise WireError("a message nests too deeply to send")
    t = type(obj)
    if t in _PLAIN:
        return obj
    if t is list:
        if all(type(x) in _PLAIN for x in obj):
            return obj
        return [_encode(x, buffers, depth + 1) for x in obj]
    if t is tuple:
        return {"~t": [_encode(x, buffers, depth + 1) for x in obj]}
    if t is dict:
        return {"~d": [[_encode(k, buffers, depth + 1), _encode(v, buffers, depth + 1)] for k, v in obj.items()]}
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise WireError("an array of Python objects cannot be sent")
        buffers.append(obj)
        return {"~a": len(buffers) - 1}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, enum.Enum):  # the Backend: its name as a string, which the Verdict reads back
        return obj.value
    name = t.__name__
    if dataclasses.is_dataclass(obj) and classes().get(name) is t:
        fields = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if name == "Trace" and f.name == "events" and getattr(value, "columns", None) is not None \
                    and getattr(value, "_pending", False):
                fields["events"] = {"~ev": _encode(value.columns, buffers, depth + 1)}  # lanes' columns, as arrays
            elif name == "Trace" and f.name == "events":
                fields["events"] = value if type(value) is list else list(value)  # plain tuples of numbers: JSON writes them as lists
            else:
                fields[f.name] = _encode(value, buffers, depth + 1)
        return {"~c": name, "f": fields}
    raise WireError(f"cannot send a {name}")


def _as_text(obj):
    """Inside a trace's events (written as they are, for speed): a numpy scalar as its number,
    anything else a kernel put in an index (a slice, say) as its text."""
    if isinstance(obj, np.generic):
        return obj.item()
    return repr(obj)


def _write_all(fd: int, data: bytes, deadline: float | None) -> None:
    view = memoryview(data)
    while view:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                raise WireTimeout("the other side stopped reading")
        n = os.write(fd, view[:1 << 16] if deadline is not None else view)  # a pipe takes 64 KB at once
        view = view[n:]


# -- reading ---------------------------------------------------------------------------------------
def receive(fd: int, deadline: float | None = None, alive=None, limits: Limits | None = None):
    """Read one message: (header, arrays). Raises WireTimeout past `deadline` (time.monotonic),
    WireClosed when the other side closed the channel, WireTooLarge past `limits` (nothing of it
    read), WireError when what came is not a message.
    `alive()`, polled while waiting, may return False to give up (e.g. the child died)."""
    limits = limits or Limits()
    reader = _Reader(fd, deadline, alive)
    size = reader.length(MAX_HEADER, "header", limits.header)
    body = reader.exactly(size)
    count = reader.length(MAX_ARRAYS, "array count", limits.arrays)
    arrays, left = [], limits.array_bytes
    for _ in range(count):
        n = reader.length(MAX_ARRAY, "array", left)
        left -= n
        data = reader.exactly(n)
        try:
            arrays.append(np.load(io.BytesIO(data), allow_pickle=False))
        except Exception as e:
            raise WireError(f"an array in the message is not a plain .npy buffer: {e}") from None
    try:
        raw = json.loads(body)
        return _decode(raw, arrays, 0), arrays
    except WireError:
        raise
    except (ValueError, RecursionError, TypeError, KeyError) as e:
        raise WireError(f"the message is not valid: {type(e).__name__}: {str(e)[:200]}") from None


def _decode(obj, arrays: list, depth: int):
    if depth > MAX_DEPTH:
        raise WireError("the message nests too deeply")
    t = type(obj)
    if t in _PLAIN:
        return obj
    if t is list:
        if all(type(x) in _PLAIN for x in obj):
            return obj
        return [_decode(x, arrays, depth + 1) for x in obj]
    if t is not dict or len(obj) > 2:
        raise WireError("the message holds an untagged object")
    if "~t" in obj:
        return tuple(_decode(x, arrays, depth + 1) for x in _list(obj["~t"]))
    if "~d" in obj:
        out = {}
        for pair in _list(obj["~d"]):
            if type(pair) is not list or len(pair) != 2:
                raise WireError("a dict entry is not a [key, value] pair")
            key = _decode(pair[0], arrays, depth + 1)
            if type(key) not in (str, int, tuple):
                raise WireError("a dict key is not a string, an int or a tuple")
            out[key] = _decode(pair[1], arrays, depth + 1)
        return out
    if "~a" in obj:
        n = obj["~a"]
        if type(n) is not int or not 0 <= n < len(arrays):
            raise WireError("an array reference points nowhere")
        return arrays[n]
    if "~c" in obj:
        return _rebuild(obj, arrays, depth)
    raise WireError("the message holds an unknown tag")


def _rebuild(obj, arrays, depth):
    cls = classes().get(obj["~c"]) if type(obj["~c"]) is str else None
    fields = obj.get("f")
    if cls is None or type(fields) is not dict:
        raise WireError(f"the message names a class that is not allowed: {str(obj['~c'])[:60]!r}")
    known = {f.name for f in dataclasses.fields(cls)}
    values = {}
    for key, value in fields.items():
        if key not in known:
            raise WireError(f"{cls.__name__} has no field {str(key)[:60]!r}")
        if cls.__name__ == "Trace" and key == "events" and type(value) is dict:
            values[key] = _event_columns(_decode(value.get("~ev"), arrays, depth + 1))
        elif cls.__name__ == "Trace" and key == "events":
            values[key] = _events(value)
        elif cls.__name__ == "Trace" and key == "uninit_used":
            values[key] = _uninit_used(_decode(value, arrays, depth + 1))
        else:
            values[key] = _decode(value, arrays, depth + 1)
    try:
        return cls(**values)
    except (TypeError, ValueError) as e:
        raise WireError(f"{cls.__name__} could not be rebuilt: {e}") from None


def _events(raw) -> list:
    """Trace events: (tid, op, aid, flat, value, line, phase, wphase); `flat` is an index tuple for
    out-of-bounds accesses."""
    events = []
    for e in _list(raw):
        if type(e) is not list or len(e) != 8 or not all(type(e[i]) is int for i in _EVENT_INTS) \
                or type(e[5]) not in (int, type(None)):
            raise WireError("a trace event is not 8 values with integer thread, op, array, line and phases")
        if type(e[3]) is list and all(type(i) in _PLAIN for i in e[3]):
            e[3] = tuple(e[3])  # an out-of-bounds index, as the kernel wrote it
        elif type(e[3]) is not int:
            raise WireError("a trace event's index is neither a flat index nor a tuple of ints")
        if type(e[4]) not in (int, float, bool, type(None)):
            raise WireError("a trace event's value is not a number")
        events.append(tuple(e))
    return events


_EVENT_INTS = (0, 1, 2, 6, 7)
_COLUMNS = ("tid", "op", "aid", "flat", "line", "phase", "wphase")


def _event_columns(cols):
    """A lanes trace's events as columns (trace.LazyEvents): integer arrays of one length, and
    values as a numeric array or a list of numbers."""
    from ..trace import LazyEvents

    if type(cols) is not dict or set(cols) != {*_COLUMNS, "value"}:
        raise WireError("a trace's event columns are not the eight it has")
    n = None
    for key in _COLUMNS:
        c = cols[key]
        if not isinstance(c, np.ndarray) or c.ndim != 1 or c.dtype.kind not in "iu":
            raise WireError(f"a trace's column {key!r} is not a row of integers")
        n = len(c) if n is None else n
        if len(c) != n:
            raise WireError("a trace's event columns differ in length")
    values = cols["value"]
    if isinstance(values, np.ndarray):
        if values.ndim != 1 or values.dtype.kind not in "fiu" or len(values) != n:
            raise WireError("a trace's values are not a row of numbers")
    elif type(values) is not list or len(values) != n or not all(type(v) in (int, float) for v in values):
        raise WireError("a trace's values are not a row of numbers")
    return LazyEvents(cols)


def _uninit_used(used):
    """Trace.uninit_used: None, or event index -> the line that used the value (or None)."""
    if used is None:
        return None
    if type(used) is not dict or not all(type(k) is int and type(v) in (int, type(None)) for k, v in used.items()):
        raise WireError("a trace's used unwritten reads are not event indices with lines")
    return used


def _list(x) -> list:
    if type(x) is not list:
        raise WireError("expected a list in the message")
    return x


class _Reader:
    def __init__(self, fd, deadline, alive):
        self.fd, self.deadline, self.alive = fd, deadline, alive

    def length(self, limit: int, what: str, allowed: int | None = None) -> int:
        """The next length: past `limit` no message of ours says it (garbage); past `allowed`, more
        than this reader takes (too large)."""
        (n,) = LENGTH.unpack(self.exactly(LENGTH.size))
        if n > limit:
            raise WireError(f"the {what} is too large ({n:,} > {limit:,})")
        if allowed is not None and n > allowed:
            raise WireTooLarge(f"{n:,} arrays, more than {allowed:,}" if what == "array count"
                               else f"the {what} is {n:,} bytes, more than the {allowed:,} left for it")
        return n

    def exactly(self, n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            self._wait()
            chunk = os.read(self.fd, min(n - got, 1 << 20))
            if not chunk:
                raise WireClosed("the channel closed")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _wait(self) -> None:
        while True:
            timeout = 0.2
            if self.deadline is not None:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    raise WireTimeout("no answer in time")
                timeout = min(timeout, left)
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if ready:
                return
            if self.alive is not None and not self.alive():
                raise WireClosed("the other side is gone")
