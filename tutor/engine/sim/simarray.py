"""Arrays as a simulated kernel sees them: bounds-checked as on a GPU, and every access traced.

Storage is a flat Python list (reads return Python floats and ints, which is several times faster
than numpy scalars); the launch copies it back into a numpy array of the right dtype at the end.
Negative indices are out of bounds here, as on a GPU, even though numpy would wrap them. Shared and
local memory start poisoned (None), so a read of a cell nobody wrote is caught. Such a read gives an
Undefined value, judged as Valgrind's memcheck judges one: copying it and computing with it is no
error, using it is (see Undefined).
"""

from __future__ import annotations

import itertools
import math
import operator
import sys

from ..trace import ATOMIC, OOB_READ, OOB_WRITE, READ, UNINIT_READ, WRITE

_getframe = sys._getframe
NAN = float("nan")


class SimArray:
    """A view over flat storage: shape and element strides, plus the array id the trace uses."""

    __slots__ = ("data", "shape", "strides", "offset", "aid", "st", "ndim", "n0", "s0", "s1", "n1",
                 "is_int", "poisoned", "readonly", "dtype", "emit", "lo", "hi", "quiet")

    def __init__(self, data, shape, strides, offset, aid, st, is_int, poisoned, dtype, readonly=False,
                 quiet=False):
        self.data = data
        self.shape = tuple(shape)
        self.strides = tuple(strides)
        self.offset = offset
        self.aid = aid
        self.st = st
        self.ndim = len(shape)
        self.n0 = shape[0] if shape else 0
        self.s0 = strides[0] if strides else 0
        self.n1 = shape[1] if len(shape) > 1 else 0
        self.s1 = strides[1] if len(strides) > 1 else 0
        self.is_int = is_int
        self.lo, self.hi = _INT_RANGES.get(dtype, (None, None)) if is_int else (None, None)
        self.poisoned = poisoned
        self.dtype = dtype
        self.readonly = readonly
        # A quiet array traces only what goes wrong (out of bounds, unwritten reads), not each
        # read and write: see new_array.
        self.quiet = quiet
        self.emit = _discard if quiet else st.events.append

    # numba exposes these on device arrays; learners use them for bounds
    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __len__(self):
        return self.n0

    # -- indexing -------------------------------------------------------------------------------
    def _flat(self, idx):
        """Flat storage index, a view (partial index or slice), or None when out of bounds."""
        if type(idx) is int:
            if self.ndim == 1:
                if 0 <= idx < self.n0:
                    return self.offset + idx * self.s0
                return None
            return self._view((idx,))
        if type(idx) is tuple:
            if len(idx) == 2 and self.ndim == 2 and type(idx[0]) is int and type(idx[1]) is int:
                i, j = idx
                if 0 <= i < self.n0 and 0 <= j < self.n1:
                    return self.offset + i * self.s0 + j * self.s1
                return None
            return self._general(idx)
        return self._general((idx,))

    def _general(self, idx):
        clean = []
        for k in idx:
            if type(k) is slice:
                return self._view(idx)
            clean.append(_as_index(k))
        if len(clean) < self.ndim:
            return self._view(tuple(clean))
        if len(clean) > self.ndim:
            raise IndexError(f"too many indices: the array has {self.ndim} dimension(s), got {len(clean)}")
        flat = self.offset
        for k, n, s in zip(clean, self.shape, self.strides):
            if not 0 <= k < n:
                return None
            flat += k * s
        return flat

    def _view(self, idx):
        offset = self.offset
        shape, strides = [], []
        dims = list(zip(self.shape, self.strides))
        if len(idx) > len(dims):
            raise IndexError(f"too many indices: the array has {self.ndim} dimension(s), got {len(idx)}")
        for k, (n, s) in zip(idx, dims):
            if type(k) is slice:
                start, stop, step = k.indices(n)
                shape.append(max(0, len(range(start, stop, step))))
                strides.append(s * step)
                offset += start * s
            else:
                k = _as_index(k)
                if not 0 <= k < n:
                    return None
                offset += k * s
        for n, s in dims[len(idx):]:
            shape.append(n)
            strides.append(s)
        return SimArray(self.data, shape, strides, offset, self.aid, self.st, self.is_int,
                        self.poisoned, self.dtype, self.readonly, self.quiet)

    def __getitem__(self, idx):
        return self._get(idx, 2)

    def __setitem__(self, idx, value):
        self._set(idx, value, 2)

    def _get(self, idx, depth):
        flat = self._flat(idx)
        st = self.st
        if type(flat) is not int:
            if flat is None:
                frame = _getframe(depth)
                st.events.append((st.tid, OOB_READ, self.aid, _norm(idx), None,
                                  frame.f_lineno, st.phase, st.wphase))
                _note_code(st, frame)
                return 0 if self.is_int else NAN
            return flat  # a view
        v = self.data[flat]
        if v is None:
            origin = _unwritten_read(st, self.aid, flat, _getframe(depth).f_lineno)
            return Undefined(0 if self.is_int else NAN, origin, st)
        if not self.quiet:
            st.events.append((st.tid, READ, self.aid, flat, v, _getframe(depth).f_lineno, st.phase, st.wphase))
        return v

    def _set(self, idx, value, depth):
        flat = self._flat(idx)
        st = self.st
        if type(flat) is not int:
            if flat is None:
                if type(value) is Undefined:
                    value = value.use()  # a store, if to nowhere
                frame = _getframe(depth)
                st.events.append((st.tid, OOB_WRITE, self.aid, _norm(idx), _plain(value),
                                  frame.f_lineno, st.phase, st.wphase))
                _note_code(st, frame)
                return
            raise TypeError("assigning to a slice of an array is not supported in a kernel: "
                            "write one element at a time")
        if self.readonly:
            raise TypeError("constant memory is read-only in a kernel")
        value = self._coerce(value)
        self.data[flat] = value
        if not self.quiet:
            st.events.append((st.tid, WRITE, self.aid, flat, value, _getframe(depth).f_lineno, st.phase,
                              st.wphase))

    def _coerce(self, value):
        if self.is_int:
            if type(value) is not int:
                value = _to_int(value)
            if self.lo is not None and not self.lo <= value <= self.hi:
                value = self._wrap(value)
            return value
        if type(value) is not float:
            value = float(value)
        return value

    # -- atomics --------------------------------------------------------------------------------
    def atomic(self, idx, update, depth=2):
        """Apply `update(old) -> new` atomically; returns the old value, as CUDA's atomics do."""
        flat = self._flat(idx)
        st = self.st
        frame = _getframe(depth)
        line = frame.f_lineno
        if type(flat) is not int:
            if flat is None:
                st.events.append((st.tid, OOB_WRITE, self.aid, _norm(idx), None, line, st.phase, st.wphase))
                _note_code(st, frame)
                return 0 if self.is_int else NAN
            raise TypeError("an atomic needs one element, not a slice of an array")
        old = self.data[flat]
        if old is None:
            origin = _unwritten_read(st, self.aid, flat, line)
            st.trace.uninit_used[origin] = line  # used at once: the result is stored
            old = 0 if self.is_int else NAN
        new = self._coerce(update(old))
        self.data[flat] = new
        st.events.append((st.tid, ATOMIC, self.aid, flat, new, line, st.phase, st.wphase))
        return old

    def _wrap(self, value: int) -> int:
        return wrapped(value, self.lo, self.hi)

    def __repr__(self):
        return f"<simulated array shape={self.shape}>"

    # Things numpy arrays do that a kernel cannot: say so plainly instead of misbehaving.
    def __iter__(self):
        raise TypeError("iterating over an array is not supported in a kernel: index it with range()")


class Contiguous1D(SimArray):
    """A whole 1-D array (a parameter, or a shared or local array): a[i] with an in-range int
    index is the one access that matters for speed, so it skips every general step."""

    __slots__ = ()

    def __getitem__(self, idx):
        if type(idx) is int and 0 <= idx < self.n0:
            v = self.data[idx]
            if v is not None:
                st = self.st
                self.emit((st.tid, READ, self.aid, idx, v, _getframe(1).f_lineno, st.phase, st.wphase))
                return v
        return self._get(idx, 2)

    def __setitem__(self, idx, value):
        if type(idx) is int and 0 <= idx < self.n0:
            if self.is_int:
                if type(value) is not int:
                    value = _to_int(value)
                if self.lo is not None and not self.lo <= value <= self.hi:
                    value = self._wrap(value)
            elif type(value) is not float:
                value = float(value)
            self.data[idx] = value
            st = self.st
            self.emit((st.tid, WRITE, self.aid, idx, value, _getframe(1).f_lineno, st.phase, st.wphase))
            return
        self._set(idx, value, 2)


class Contiguous2D(SimArray):
    """A whole C-ordered 2-D array: a[i, j] with in-range ints skips every general step."""

    __slots__ = ()

    def __getitem__(self, idx):
        if type(idx) is tuple and len(idx) == 2:
            i, j = idx
            if type(i) is int and type(j) is int and 0 <= i < self.n0 and 0 <= j < self.n1:
                flat = i * self.n1 + j
                v = self.data[flat]
                if v is not None:
                    st = self.st
                    self.emit((st.tid, READ, self.aid, flat, v, _getframe(1).f_lineno, st.phase, st.wphase))
                    return v
        return self._get(idx, 2)

    def __setitem__(self, idx, value):
        if type(idx) is tuple and len(idx) == 2:
            i, j = idx
            if type(i) is int and type(j) is int and 0 <= i < self.n0 and 0 <= j < self.n1:
                if self.is_int:
                    if type(value) is not int:
                        value = _to_int(value)
                    if self.lo is not None and not self.lo <= value <= self.hi:
                        value = self._wrap(value)
                elif type(value) is not float:
                    value = float(value)
                flat = i * self.n1 + j
                self.data[flat] = value
                st = self.st
                self.emit((st.tid, WRITE, self.aid, flat, value, _getframe(1).f_lineno, st.phase, st.wphase))
                return
        self._set(idx, value, 2)


class Contiguous4D(SimArray):
    """A whole C-ordered 4-D array (attention's (B, H, S, D)): a[b, h, s, d] with in-range ints
    skips every general step."""

    __slots__ = ()

    def __getitem__(self, idx):
        if type(idx) is tuple and len(idx) == 4:
            i, j, l, m = idx
            n0, n1, n2, n3 = self.shape
            if (type(i) is int and type(j) is int and type(l) is int and type(m) is int
                    and 0 <= i < n0 and 0 <= j < n1 and 0 <= l < n2 and 0 <= m < n3):
                flat = ((i * n1 + j) * n2 + l) * n3 + m
                v = self.data[flat]
                if v is not None:
                    st = self.st
                    self.emit((st.tid, READ, self.aid, flat, v, _getframe(1).f_lineno, st.phase, st.wphase))
                    return v
        return self._get(idx, 2)

    def __setitem__(self, idx, value):
        if type(idx) is tuple and len(idx) == 4 and type(value) is float and not self.is_int:
            i, j, l, m = idx
            n0, n1, n2, n3 = self.shape
            if (type(i) is int and type(j) is int and type(l) is int and type(m) is int
                    and 0 <= i < n0 and 0 <= j < n1 and 0 <= l < n2 and 0 <= m < n3):
                flat = ((i * n1 + j) * n2 + l) * n3 + m
                self.data[flat] = value
                st = self.st
                self.emit((st.tid, WRITE, self.aid, flat, value, _getframe(1).f_lineno, st.phase, st.wphase))
                return
        self._set(idx, value, 2)


class ContiguousND(SimArray):
    """A whole C-ordered array of 3 or more dimensions: a full index of in-range ints skips every
    general step (Contiguous4D unrolls the commonest of them)."""

    __slots__ = ()

    def __getitem__(self, idx):
        if type(idx) is tuple and len(idx) == self.ndim:
            flat = 0
            for k, n in zip(idx, self.shape):
                if type(k) is not int or not 0 <= k < n:
                    break
                flat = flat * n + k
            else:
                v = self.data[flat]
                if v is not None:
                    st = self.st
                    self.emit((st.tid, READ, self.aid, flat, v, _getframe(1).f_lineno, st.phase, st.wphase))
                    return v
        return self._get(idx, 2)

    def __setitem__(self, idx, value):
        if type(idx) is tuple and len(idx) == self.ndim and type(value) is float and not self.is_int:
            flat = 0
            for k, n in zip(idx, self.shape):
                if type(k) is not int or not 0 <= k < n:
                    break
                flat = flat * n + k
            else:
                self.data[flat] = value
                st = self.st
                self.emit((st.tid, WRITE, self.aid, flat, value, _getframe(1).f_lineno, st.phase, st.wphase))
                return
        self._set(idx, value, 2)


class KernelTimeout(BaseException):
    """Raised inside the running kernel when its time or its trace size runs out (launch.watchdog).

    A BaseException so that a learner's `except Exception` cannot swallow it."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def shape_of(shape) -> tuple:
    """A shared or local array's shape as a tuple of ints, as `cuda.*.array(shape, ...)` takes it."""
    import numpy as np

    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


class NeedsCheckedRun(BaseException):
    """A launch with FastLocal arrays met something only the checked arrays judge: it is run again
    from its inputs with them. A BaseException, so that a kernel's `except Exception` cannot
    swallow it (the launch's flag would catch that too)."""


class FastLocal(dict):
    """A float local array for a run no one watches thread by thread (the verifier's), in a dict
    keyed by index: an in-range read or write of a written cell costs one C-level dict operation,
    several times cheaper than a traced array's method call. It judges nothing itself, and so it
    need not be exact where something goes wrong: any read it cannot answer (a cell never written,
    out of bounds, a view, a wrong index), any thread error, a key outside the array when the block
    ends, and any read of memory nobody wrote (its value may have been stored here, which the
    checked arrays count as a use) makes the launch start over with checked local arrays
    (NeedsCheckedRun), whose verdict is the one kept.
    Values are stored as written (an int stays an int in a float array): they are equal as numbers,
    and the real compiler has already refused whatever would tell them apart (a float index)."""

    __slots__ = ("valid", "shape", "ndim", "size", "dtype", "st")

    def __missing__(self, idx):
        self.st.needs_checked_run = True
        raise NeedsCheckedRun(f"local array read at {idx!r}")

    def __len__(self):
        return self.shape[0]

    def __iter__(self):
        self.st.needs_checked_run = True
        raise NeedsCheckedRun("iterating over a local array")

    def __repr__(self):
        return f"<simulated array shape={self.shape}>"

    def faulty(self) -> bool:
        """Whether a write went outside the array: the checked run reports it, with its line."""
        return not self.keys() <= self.valid


class IntFastLocal(FastLocal):
    """An integer local array, as FastLocal is for floats: a store keeps what the checked array's
    would (SimArray._coerce: a float truncated toward zero, NaN and infinities as 0, and a value past
    the dtype's range wrapped into it, a bool as 0 or 1), at the cost of one Python call."""

    __slots__ = ("lo", "hi")

    def __setitem__(self, idx, value):
        if type(value) is not int:
            value = _to_int(value)
        lo = self.lo
        if lo is not None and not lo <= value <= self.hi:
            value = wrapped(value, lo, self.hi)
        dict.__setitem__(self, idx, value)


def wrapped(value: int, lo: int, hi: int) -> int:
    """A store past an integer type's range [lo, hi] keeps the low bits, two's complement, as on a
    GPU; a bool's (0, 1) keeps whether it was nonzero."""
    if lo == 0 and hi == 1:  # bool
        return 1 if value else 0
    return (value - lo) % (hi - lo + 1) + lo


_VALID_KEYS: dict = {}


def fast_local(shape: tuple, dtype: str, st, is_int: bool = False) -> FastLocal:
    """An empty FastLocal (IntFastLocal where `is_int`) of this shape (see FastLocal)."""
    valid = _VALID_KEYS.get(shape)
    if valid is None:
        if len(shape) == 1:
            valid = frozenset(range(shape[0]))
        else:
            valid = frozenset(itertools.product(*(range(n) for n in shape)))
        _VALID_KEYS[shape] = valid
    if is_int:
        a = IntFastLocal()
        a.lo, a.hi = _INT_RANGES.get(dtype, (None, None))
    else:
        a = FastLocal()
    a.valid, a.shape, a.ndim, a.dtype, a.st = valid, shape, len(shape), dtype, st
    size = 1
    for n in shape:
        size *= n
    a.size = size
    return a


def _discard(event) -> None:
    """A quiet array's emit: the event is not kept."""


MAX_CODE_NOTES = 64
_POSITIONS: dict = {}  # code object -> its instructions' source positions


def _note_code(st, frame) -> None:
    """Beside the out-of-bounds event just traced: the source text of the access that made it
    (`a[i + 1]`, `out[i, j]`, a `cuda.atomic.add(...)` call), from the position of the instruction
    the kernel's frame is executing, so the report can name the index expression that went out.
    Kept once per array, line and text, for a few dozen; nothing is noted where it is unknown."""
    trace = st.trace
    notes = trace.oob_code
    if notes is None:
        notes = trace.oob_code = {}
    if len(notes) >= MAX_CODE_NOTES:
        return
    events = st.events
    e = events[-1]
    place = (e[2], frame.f_code, frame.f_lasti)  # this array at this instruction: noted already?
    if place in st.oob_places:
        return
    st.oob_places.add(place)
    text = _code_at(frame, st.source_lines, st.filename)
    if text is None:
        return
    for i, known in notes.items():
        if known == text and events[i][2] == e[2] and events[i][5] == e[5]:
            return
    notes[len(events) - 1] = text


def _code_at(frame, lines, filename) -> str | None:
    code = frame.f_code
    if not lines or (filename and code.co_filename != filename):
        return None
    try:
        positions = _POSITIONS.get(code)
        if positions is None:
            if len(_POSITIONS) > 256:
                _POSITIONS.clear()
            positions = _POSITIONS[code] = list(code.co_positions())
        start, end, col, end_col = positions[frame.f_lasti // 2]
    except (AttributeError, IndexError, TypeError, ValueError):
        return None
    if start is None or start != end or col is None or end_col is None or not 1 <= start <= len(lines):
        return None
    text = lines[start - 1].encode("utf-8")[col:end_col].decode("utf-8", "replace").strip()
    return text[:200] or None


def _unwritten_read(st, aid, flat, line) -> int:
    """Trace a read of a cell nobody wrote; its index in the events, for an Undefined to point at."""
    events = st.events
    events.append((st.tid, UNINIT_READ, aid, flat, None, line, st.phase, st.wphase))
    trace = st.trace
    if trace.uninit_used is None:
        trace.uninit_used = {}  # this launch follows uses: only those reads that mattered count
    return len(events) - 1


class Undefined:
    """A value read from memory no thread wrote, as Valgrind's memcheck sees it: garbage that a
    thread may copy, shuffle, print and compute with, an error only once it matters. Arithmetic,
    comparisons and math on it give Undefined results that point at the same read. It is used, and
    the read is reported, when it is stored into an array, decides a branch (bool), becomes an index
    or a count, is converted (int(), float(), a numba cast, a math function) or reaches an atomic.

    `v` is what the simulator computes with meanwhile: 0 for an int cell, NaN for a float one, so
    outputs and control flow are what they were before values were followed. `origin` is the
    UNINIT_READ event's index in the trace; `st` the Launch."""

    __slots__ = ("v", "origin", "st")

    def __init__(self, v, origin, st):
        self.v = v
        self.origin = origin
        self.st = st

    def use(self):
        """The value matters from here on: note its read (once) with the line that used it."""
        used = self.st.trace.uninit_used
        if self.origin not in used:
            used[self.origin] = _kernel_line(self.st.filename)
        return self.v

    # -- uses -----------------------------------------------------------------------------------
    def __bool__(self):
        return bool(self.use())

    def __index__(self):
        v = self.use()
        try:
            return operator.index(v)
        except TypeError:
            raise TypeError(f"a {type(v).__name__} cannot be used as an index or a count (this one was read "
                            f"on line {self.st.events[self.origin][5]} from memory no thread wrote)") from None

    def __int__(self):
        v = self.use()
        try:
            return int(v)
        except (ValueError, OverflowError):
            return 0  # NaN or infinity: garbage either way

    def __float__(self):
        return float(self.use())

    def __complex__(self):
        return complex(self.use())

    def __hash__(self):
        return hash(self.use())

    def __getattr__(self, name):
        if name.startswith("_") or name in Undefined.__slots__:
            raise AttributeError(name)
        return getattr(self.use(), name)

    # -- passing it on is no use ----------------------------------------------------------------
    def __str__(self):
        return str(self.v)

    def __repr__(self):
        return repr(self.v)

    def __format__(self, spec):
        return format(self.v, spec)

    # what a plain number would refuse, in the words a plain number would use
    def __len__(self):
        return len(self.v)

    def __getitem__(self, idx):
        return self.v[idx]

    def __iter__(self):
        return iter(self.v)

    def __call__(self, *args, **kwargs):
        return self.v(*args, **kwargs)

    # -- computing with it gives garbage that remembers where it came from ----------------------
    def _like(self, v):
        return Undefined(v, self.origin, self.st)

    def __neg__(self):
        return self._like(-self.v)

    def __pos__(self):
        return self._like(+self.v)

    def __abs__(self):
        return self._like(abs(self.v))

    def __invert__(self):
        return self._like(~self.v)

    def __round__(self, ndigits=None):
        return self._like(_garbage(round, self.v, ndigits) if ndigits is not None else _garbage(round, self.v))

    def __floor__(self):
        return self._like(_garbage(math.floor, self.v))

    def __ceil__(self):
        return self._like(_garbage(math.ceil, self.v))

    def __trunc__(self):
        return self._like(_garbage(math.trunc, self.v))

    def __divmod__(self, other):
        q, r = _garbage(divmod, self.v, _plain_value(other), pair=True)
        return self._like(q), self._like(r)

    def __rdivmod__(self, other):
        q, r = _garbage(divmod, _plain_value(other), self.v, pair=True)
        return self._like(q), self._like(r)

    def __pow__(self, other, mod=None):
        if mod is None:
            return self._like(_garbage(pow, self.v, _plain_value(other)))
        return self._like(_garbage(pow, self.v, _plain_value(other), _plain_value(mod)))

    def __rpow__(self, other):
        return self._like(_garbage(pow, _plain_value(other), self.v))

    # numpy: a ufunc (np.sqrt, or a numpy scalar's operator) computes on the stand-in, and the
    # result stays undefined
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or "out" in kwargs:
            return NotImplemented
        r = _garbage(ufunc, *(_plain_value(x) for x in inputs), **kwargs)
        if type(r) is tuple:
            return tuple(self._like(x) for x in r)
        return self._like(r)


def _binary(op):
    def forward(self, other):
        return Undefined(_garbage(op, self.v, _plain_value(other)), self.origin, self.st)

    def reverse(self, other):
        return Undefined(_garbage(op, _plain_value(other), self.v), self.origin, self.st)

    return forward, reverse


for _name, _op in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("floordiv", operator.floordiv), ("mod", operator.mod),
                   ("lshift", operator.lshift), ("rshift", operator.rshift), ("and", operator.and_),
                   ("or", operator.or_), ("xor", operator.xor)):
    _fwd, _rev = _binary(_op)
    setattr(Undefined, f"__{_name}__", _fwd)
    setattr(Undefined, f"__r{_name}__", _rev)
for _name, _op in (("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge),
                   ("eq", operator.eq), ("ne", operator.ne)):
    setattr(Undefined, f"__{_name}__", _binary(_op)[0])  # Python reflects comparisons itself
del _name, _op, _fwd, _rev


def _plain_value(x):
    return x.v if type(x) is Undefined else x


def _garbage(fn, *args, pair=False, **kwargs):
    """fn(*args) on stand-in values; where that has no answer (NaN to an int, a division by the
    stand-in 0), garbage in gives garbage out, not an error a GPU would never raise."""
    try:
        return fn(*args, **kwargs)
    except (ArithmeticError, ValueError):
        bad = NAN if fn is operator.truediv or any(type(a) is float for a in args) else 0
        return (bad, bad) if pair else bad


def _kernel_line(filename):
    """The line of the learner's file that is running: the innermost frame of that file."""
    f = _getframe(2)
    for _ in range(64):
        if f is None:
            return None
        if f.f_code.co_filename == filename:
            return f.f_lineno
        f = f.f_back
    return None


def new_array(data, shape, aid, st, is_int, poisoned, dtype, readonly=False, quiet=False) -> SimArray:
    """A whole C-ordered array over flat storage, of the fastest class that fits. A quiet array
    (a local array the caller does not want traced access by access) records only its faults."""
    shape = tuple(shape)
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    strides = tuple(reversed(strides))
    cls = SimArray
    if not readonly and len(shape) == 1:
        cls = Contiguous1D
    elif not readonly and len(shape) == 2:
        cls = Contiguous2D
    elif not readonly and len(shape) == 4:
        cls = Contiguous4D
    elif not readonly and len(shape) >= 3:
        cls = ContiguousND
    return cls(data, shape, strides, 0, aid, st, is_int, poisoned, dtype, readonly, quiet)


def _as_index(k):
    t = type(k)
    if t is int:
        return k
    if t is bool:
        return int(k)
    if hasattr(k, "__index__"):
        return k.__index__()
    raise TypeError(f"array index must be an integer, got {t.__name__} {k!r}")


def _norm(idx):
    if type(idx) is tuple:
        return tuple(_plain(k) for k in idx)
    return (_plain(idx),)


def _plain(v):
    if type(v) is Undefined:
        return v.use()
    if hasattr(v, "item"):
        try:
            return v.item()
        except Exception:
            return v
    return v


_INT_RANGES = {f"{u}int{bits}": ((0, (1 << bits) - 1) if u else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1))
               for bits in (8, 16, 32, 64) for u in ("", "u")}
_INT_RANGES["bool"] = (0, 1)


def _to_int(value):
    if type(value) is float:
        if value != value or value in (float("inf"), float("-inf")):
            return 0
        return int(value)
    return int(value)
