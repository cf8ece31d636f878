"""The record of one launch: every memory access, in the order the simulator made it.

The trace is plain data (tuples, ints, strings) so that it pickles cheaply from the child process
to the UI and the CLI, which draw it without re-running anything. Helpers here answer the questions
every consumer asks (which block is this thread in, what did thread t do, what did a cell hold at
phase p), so that no consumer re-derives them differently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Event layout: (tid, op, aid, flat, value, line, phase, wphase)
#   tid    linear thread id in the grid: block_linear * threads_per_block + thread_linear
#   op     one of the op codes below
#   aid    ArrayInfo.aid of the array touched
#   flat   flat element index into the array's storage (for OOB ops: the index tuple as written)
#   value  the value read or written (for atomics: the new value)
#   line   the source line of the kernel file that made the access
#   phase  the block's barrier phase (number of block barriers passed so far)
#   wphase the thread's warp phase (number of syncwarp barriers it has passed)
TID, OP, AID, FLAT, VALUE, LINE, PHASE, WPHASE = range(8)

READ = 0
WRITE = 1
ATOMIC = 2
OOB_READ = 3
OOB_WRITE = 4
UNINIT_READ = 5

OP_NAMES = {
    READ: "read",
    WRITE: "write",
    ATOMIC: "atomic",
    OOB_READ: "out-of-bounds read",
    OOB_WRITE: "out-of-bounds write",
    UNINIT_READ: "read of unwritten memory",
}

READ_OPS = (READ, OOB_READ, UNINIT_READ)
WRITE_OPS = (WRITE, ATOMIC, OOB_WRITE)

GLOBAL = "global"
SHARED = "shared"
LOCAL = "local"
CONST = "const"


@dataclass
class ArrayInfo:
    """One array the kernel saw: a parameter, or a block's shared array, or a thread's local array."""

    aid: int
    name: str
    space: str
    shape: tuple
    dtype: str
    block: tuple | None = None  # owning block, for shared arrays
    thread: tuple | None = None  # owning thread, for local arrays
    line: int | None = None  # where it was allocated (shared and local arrays)
    initial: list | None = None  # flat initial values (global arrays); None cells are unwritten

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def unravel(self, flat: int) -> tuple:
        """Turn a flat index into the index tuple a learner writes."""
        idx = []
        for s in reversed(self.shape):
            idx.append(flat % s if s else 0)
            flat //= s if s else 1
        return tuple(reversed(idx))

    def label(self) -> str:
        if self.space == SHARED:
            return f"shared array '{self.name}' of block {fmt_dim(self.block)}"
        if self.space == LOCAL:
            return f"local array '{self.name}' of thread {fmt_dim(self.thread)}"
        return f"'{self.name}'"


@dataclass
class BarrierRecord:
    """A block barrier that ended a phase: which block, which phase it closed, where."""

    block: tuple
    phase: int
    line: int
    kind: str = "syncthreads"


@dataclass
class Trace:
    """Everything one launch did, for the checker, the thread grid and `gpu-tutor trace`."""

    grid: tuple  # blocks per grid (x, y, z)
    block: tuple  # threads per block (x, y, z)
    grid_nd: int = 3  # dimensions the launch was written with, for reporting positions
    block_nd: int = 3
    arrays: list[ArrayInfo] = field(default_factory=list)
    events: list[tuple] = field(default_factory=list)
    barriers: list[BarrierRecord] = field(default_factory=list)
    stopped: dict = field(default_factory=dict)  # tid -> reason the thread did not finish
    printed: str = ""
    # Where each array parameter came from, by aid (they come first, in argument order): "out", an
    # input's name or "scratch" when host code passed a DeviceArray handle, else None
    roles: list = field(default_factory=list)
    # Which reads of unwritten memory mattered, as Valgrind's memcheck judges them: index in
    # `events` of each UNINIT_READ whose value the kernel went on to use (stored it, branched on it,
    # indexed with it, converted it, gave it to an atomic) -> the kernel line of that first use, or
    # None where unknown. None where uses were not followed (a trace from elsewhere): every read of
    # unwritten memory then counts as used.
    uninit_used: dict | None = None
    # The source text of out-of-bounds accesses, by index in `events` (`a[i + 1]`): one per array,
    # line and text, for naming the index that went out. None where nothing was noted.
    oob_code: dict | None = None
    # The kernel's integer parameters and its module's integer constants, by the names the code
    # gives them, for advice that names what bounds an index (`size`, `TPB`)
    scalars: dict = field(default_factory=dict)
    constants: dict = field(default_factory=dict)
    # Each warp's runs of each source line, where the run was followed (sim/linecounts.py):
    # {warp key: {(phase, line, caller line, trip)}}; None where lines were not followed
    line_runs: dict | None = None

    # -- geometry -------------------------------------------------------------------------------
    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def n_blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    def block_of(self, tid: int) -> tuple:
        b = tid // self.threads_per_block
        gx, gy, _ = self.grid
        return (b % gx, (b // gx) % gy, b // (gx * gy))

    def thread_of(self, tid: int) -> tuple:
        t = tid % self.threads_per_block
        bx, by, _ = self.block
        return (t % bx, (t // bx) % by, t // (bx * by))

    def tid_of(self, block: tuple, thread: tuple) -> int:
        gx, gy, _ = self.grid
        bx, by, _ = self.block
        b = block[0] + block[1] * gx + block[2] * gx * gy
        t = thread[0] + thread[1] * bx + thread[2] * bx * by
        return b * self.threads_per_block + t

    def where(self, tid: int) -> tuple[tuple, tuple]:
        """(block, thread) of a linear thread id, trimmed to the launch's dimensionality."""
        return self.block_of(tid)[:self.grid_nd], self.thread_of(tid)[:self.block_nd]

    # -- questions ------------------------------------------------------------------------------
    def n_phases(self) -> int:
        return 1 + max((e[PHASE] for e in self.events), default=0)

    def global_array(self, name: str) -> ArrayInfo | None:
        for a in self.arrays:
            if a.space == GLOBAL and a.name == name:
                return a
        return None

    def cells_at(self, aid: int, phase: int) -> list:
        """The array's flat contents at the start of barrier phase `phase` (writes of earlier
        phases applied; unwritten shared cells are None)."""
        info = self.arrays[aid]
        cells = list(info.initial) if info.initial is not None else [None] * info.size
        for e in self.events:
            if e[AID] == aid and e[PHASE] < phase and e[OP] in (WRITE, ATOMIC):
                cells[e[FLAT]] = e[VALUE]
        return cells


def fmt_dim(d) -> str:
    if d is None:
        return "?"
    if len(d) == 1:
        return f"({d[0]},)"
    return "(" + ", ".join(str(x) for x in d) + ")"


class LazyEvents(list):
    """A trace's events held as columns (numpy arrays, one per field) until someone reads them as
    tuples: the lanes (sim/lanes.py) make hundreds of thousands of events as arrays, and the
    detectors read the columns (`event_columns`) without a tuple being built. Any use as a list
    builds the tuples once, in order, and from then on it is the list. Pickled, it sends the
    columns (a few arrays, not a tuple per access) and arrives as LazyEvents again."""

    __slots__ = ("columns", "_pending")

    def __init__(self, columns: dict):
        super().__init__()
        self.columns = columns  # tid, op, aid, flat, value, line, phase, wphase
        self._pending = True

    def _fill(self) -> None:
        if self._pending:
            self._pending = False
            c = self.columns
            n = len(c["tid"])
            values = c["value"]
            list.extend(self, zip(c["tid"].tolist(), c["op"].tolist(), c["aid"].tolist(), c["flat"].tolist(),
                                  values.tolist() if hasattr(values, "tolist") else values, c["line"].tolist(),
                                  c["phase"].tolist(), c["wphase"].tolist() if n else []))

    def __reduce_ex__(self, protocol):
        if self._pending:
            return (LazyEvents, (self.columns,))
        return (list, (list(self),))


def _filled(name):
    method = getattr(list, name)

    def run(self, *args, **kwargs):
        self._fill()
        return method(self, *args, **kwargs)

    run.__name__ = name
    return run


def _length(self) -> int:
    return len(self.columns["tid"]) if self._pending else list.__len__(self)


LazyEvents.__len__ = _length  # how many, without building the tuples
LazyEvents.__bool__ = lambda self: _length(self) > 0
for _name in ("__iter__", "__getitem__", "__contains__", "__reversed__", "__eq__", "__ne__", "__lt__",
              "__le__", "__gt__", "__ge__", "__add__", "__mul__", "__rmul__", "__iadd__", "__imul__", "__setitem__",
              "__delitem__", "__repr__", "__str__", "__format__", "__sizeof__", "append", "extend", "insert", "pop",
              "remove", "clear", "index", "count", "copy", "sort", "reverse"):
    setattr(LazyEvents, _name, _filled(_name))
LazyEvents.__hash__ = None


def event_columns(trace) -> dict | None:
    """The trace's events as columns where it holds them so (a launch run as lanes), else None:
    then the caller reads the tuples."""
    events = trace.events
    return events.columns if type(events) is LazyEvents else None


_FIELDS = {"tid": TID, "op": OP, "aid": AID, "flat": FLAT, "line": LINE, "phase": PHASE}


def int_columns(trace, keys) -> list:
    """The named integer fields of every event, as int64 arrays: the lanes' own columns (no copy), or
    built from the tuples at each call. An out-of-bounds event's flat (the index it tried) reads -1."""
    import numpy as np

    columns = event_columns(trace)
    if columns is not None:
        return [np.asarray(columns[k], dtype=np.int64) for k in keys]
    events = trace.events
    n = len(events)
    out = []
    for k in keys:
        i = _FIELDS[k]
        if k == "flat":
            out.append(np.fromiter((e[3] if type(e[3]) is int else -1 for e in events), dtype=np.int64, count=n))
        else:
            out.append(np.fromiter((e[i] for e in events), dtype=np.int64, count=n))
    return out
