"""Arrays as a simulated kernel sees them: bounds-checked as on a GPU, and every access traced.

Storage is a flat Python list (reads return Python floats and ints, which is several times faster
than numpy scalars); the launch copies it back into a numpy array of the right dtype at the end.
Negative indices are out of bounds here, as on a GPU, even though numpy would wrap them. Shared and
local memory start poisoned (None), so a read of a cell nobody wrote is caught.
"""

from __future__ import annotations

import sys

from .trace import ATOMIC, OOB_READ, OOB_WRITE, READ, UNINIT_READ, WRITE

_getframe = sys._getframe
NAN = float("nan")


class SimArray:
    """A view over flat storage: shape and element strides, plus the array id the trace uses."""

    __slots__ = ("data", "shape", "strides", "offset", "aid", "st", "ndim", "n0", "s0", "s1", "n1",
                 "is_int", "poisoned", "readonly", "dtype", "emit")

    def __init__(self, data, shape, strides, offset, aid, st, is_int, poisoned, dtype, readonly=False):
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
        self.poisoned = poisoned
        self.dtype = dtype
        self.readonly = readonly
        self.emit = st.events.append

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
                        self.poisoned, self.dtype, self.readonly)

    def __getitem__(self, idx):
        return self._get(idx, 2)

    def __setitem__(self, idx, value):
        self._set(idx, value, 2)

    def _get(self, idx, depth):
        flat = self._flat(idx)
        st = self.st
        if type(flat) is not int:
            if flat is None:
                st.events.append((st.tid, OOB_READ, self.aid, _norm(idx), None,
                                  _getframe(depth).f_lineno, st.phase, st.wphase))
                return 0 if self.is_int else NAN
            return flat  # a view
        v = self.data[flat]
        if v is None:
            st.events.append((st.tid, UNINIT_READ, self.aid, flat, None,
                              _getframe(depth).f_lineno, st.phase, st.wphase))
            return 0 if self.is_int else NAN
        st.events.append((st.tid, READ, self.aid, flat, v, _getframe(depth).f_lineno, st.phase, st.wphase))
        return v

    def _set(self, idx, value, depth):
        flat = self._flat(idx)
        st = self.st
        if type(flat) is not int:
            if flat is None:
                st.events.append((st.tid, OOB_WRITE, self.aid, _norm(idx), _plain(value),
                                  _getframe(depth).f_lineno, st.phase, st.wphase))
                return
            raise TypeError("assigning to a slice of an array is not supported in a kernel: "
                            "write one element at a time")
        if self.readonly:
            raise TypeError("constant memory is read-only in a kernel")
        value = self._coerce(value)
        self.data[flat] = value
        st.events.append((st.tid, WRITE, self.aid, flat, value, _getframe(depth).f_lineno, st.phase, st.wphase))

    def _coerce(self, value):
        if self.is_int:
            if type(value) is not int:
                value = _to_int(value)
            return value
        if type(value) is not float:
            value = float(value)
        return value

    # -- atomics --------------------------------------------------------------------------------
    def atomic(self, idx, update, depth=2):
        """Apply `update(old) -> new` atomically; returns the old value, as CUDA's atomics do."""
        flat = self._flat(idx)
        st = self.st
        line = _getframe(depth).f_lineno
        if type(flat) is not int:
            if flat is None:
                st.events.append((st.tid, OOB_WRITE, self.aid, _norm(idx), None, line, st.phase, st.wphase))
                return 0 if self.is_int else NAN
            raise TypeError("an atomic needs one element, not a slice of an array")
        old = self.data[flat]
        if old is None:
            st.events.append((st.tid, UNINIT_READ, self.aid, flat, None, line, st.phase, st.wphase))
            old = 0 if self.is_int else NAN
        new = self._coerce(update(old))
        self.data[flat] = new
        st.events.append((st.tid, ATOMIC, self.aid, flat, new, line, st.phase, st.wphase))
        return old

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
                elif type(value) is not float:
                    value = float(value)
                flat = i * self.n1 + j
                self.data[flat] = value
                st = self.st
                self.emit((st.tid, WRITE, self.aid, flat, value, _getframe(1).f_lineno, st.phase, st.wphase))
                return
        self._set(idx, value, 2)


def new_array(data, shape, aid, st, is_int, poisoned, dtype, readonly=False) -> SimArray:
    """A whole C-ordered array over flat storage, of the fastest class that fits."""
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
    return cls(data, shape, strides, 0, aid, st, is_int, poisoned, dtype, readonly)


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
    if hasattr(v, "item"):
        try:
            return v.item()
        except Exception:
            return v
    return v


def _to_int(value):
    if type(value) is float:
        if value != value or value in (float("inf"), float("-inf")):
            return 0
        return int(value)
    return int(value)
