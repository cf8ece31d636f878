"""What the thread pane draws, derived once from a finished launch.

The pane redraws on every key press (a new thread, the next phase, an animation tick), and a tiled
matmul's trace holds more than half a million events. So the expensive questions — which events
belong to which thread, what each array held when a phase began — are answered here once, with
numpy indexes built up front and per-array and per-phase answers computed on first use and cached.
What is wrong was decided by the check, not here: the run carries the cells the judge found wrong
at the puzzle's tolerance (`run.bad`) and the threads of every race (`run.raced`). The widgets only
look things up; none of them walks the trace or decides what "wrong" or "raced" means.

Phases: phase k is what a block did between its barrier k-1 and barrier k. The pane shows a phase
as "the accesses made in it, and the memory after them"; values_at(aid, k) is the memory at the
start of phase k (as Trace.cells_at gives it), so the state after phase k is values_at(aid, k + 1)
and values_at(aid, n_phases) is the end of the launch.

This module never imports the UI: it is plain data, testable without a terminal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from operator import itemgetter

from ..trace import (ATOMIC, CONST, GLOBAL, OOB_READ, OOB_WRITE, READ, SHARED, UNINIT_READ, WRITE,
                    Trace, fmt_dim)
from tutor.lazy import lazy

np = lazy("numpy", globals(), "np")  # the app starts before numpy loads

# Lowest priority first: a thread's status is the last of these that applies to it.
STATUSES = ("idle", "ok", "wrong", "raced", "out_of_bounds", "stopped")
IDLE, OK, WRONG, RACED, OUT_OF_BOUNDS, STOPPED = range(len(STATUSES))

STATUS_TITLES = {
    "idle": "made no memory accesses",
    "ok": "ok",
    "wrong": "wrote a wrong output cell",
    "raced": "took part in a race",
    "out_of_bounds": "went out of bounds",
    "stopped": "did not finish",
}

# How a cell relates to the selected thread in one phase (cell_marks).
UNTOUCHED, OTHERS, READ_BY_SELECTED, WRITTEN_BY_SELECTED = range(4)

OP_SHORT = {READ: "read", WRITE: "write", ATOMIC: "atomic", OOB_READ: "read", OOB_WRITE: "write",
            UNINIT_READ: "read"}
_OP_NOTE = {OOB_READ: "  (out of bounds)", OOB_WRITE: "  (out of bounds)", UNINIT_READ: "  (unwritten)"}

OUTPUT = "out"


def fmt_value(v, compact: bool = False) -> str:
    """One formatting of a cell value for every view: '?' for an unwritten cell."""
    if v is None:
        return "?"
    if isinstance(v, float):
        if not math.isfinite(v):
            return str(v)
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v)) if compact else f"{v:.1f}"
        return f"{v:.3g}" if compact else f"{v:.6g}"
    return str(v)


def fmt_index(index) -> str:
    return ", ".join(str(i) for i in index)


@dataclass(frozen=True)
class ThreadEvent:
    """One access of one thread, ready to print."""

    opcode: int
    aid: int
    array: str  # the array's name as the kernel wrote it
    space: str
    index: tuple
    value: object
    line: int
    phase: int

    @property
    def op(self) -> str:
        return OP_SHORT[self.opcode]

    @property
    def is_write(self) -> bool:
        return self.opcode in (WRITE, ATOMIC, OOB_WRITE)

    @property
    def out_of_bounds(self) -> bool:
        return self.opcode in (OOB_READ, OOB_WRITE)

    @property
    def cell(self) -> str:
        prefix = "" if self.space in (GLOBAL, CONST) else f"{self.space} "
        return f"{prefix}{self.array}[{fmt_index(self.index)}]"

    def text(self) -> str:
        value = "" if self.value is None and self.opcode in (OOB_READ, OOB_WRITE) else \
            f" = {fmt_value(self.value)}"
        note = _OP_NOTE.get(self.opcode, "")
        return f"phase {self.phase}  {self.op}  {self.cell}{value}  line {self.line}{note}"


@dataclass(frozen=True)
class ArrayModel:
    """One array as the pane lists it."""

    aid: int
    name: str
    space: str
    shape: tuple
    role: str  # "input", "output", "const", "shared" or "local"
    block: tuple | None
    thread: tuple | None

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def label(self) -> str:
        if self.role == "shared":
            return f"{self.name} (shared, block {fmt_dim(self.block)})"
        if self.role == "local":
            return f"{self.name} (local, thread {fmt_dim(self.thread)})"
        if self.role == "output":
            return f"{self.name} (output)"
        return self.name

    def unravel(self, flat: int) -> tuple:
        return tuple(int(i) for i in np.unravel_index(flat, self.shape)) if self.shape else ()


@dataclass(frozen=True)
class WrongCell:
    """An output cell whose final value is wrong, and the thread that wrote it last (if any)."""

    flat: int
    index: tuple
    expected: object
    got: object
    tid: int | None
    line: int | None

    @property
    def unwritten(self) -> bool:
        return self.tid is None

    def text(self) -> str:
        return f"{fmt_value(self.expected, True)}/{fmt_value(self.got, True)}"


class GridModel:
    """Everything the thread pane shows about one config's launch. Build it with build(run)."""

    def __init__(self, run):
        trace: Trace = run.trace
        if trace is None:
            raise ValueError("this run kept no trace")
        self.run = run
        self.trace = trace
        self.config_name: str = getattr(run.config, "name", "") or ""
        self.failures: list = list(run.failures or [])
        self.grid: tuple = tuple(trace.grid[:trace.grid_nd])
        self.block: tuple = tuple(trace.block[:trace.block_nd])
        self.grid3: tuple = tuple(trace.grid)
        self.block3: tuple = tuple(trace.block)
        self.n_blocks: int = trace.n_blocks
        self.threads_per_block: int = trace.threads_per_block
        self.n_threads: int = self.n_blocks * self.threads_per_block
        self.n_phases: int = trace.n_phases()

        ev = trace.events
        n = len(ev)
        self._tid = np.fromiter(map(itemgetter(0), ev), np.int64, n)
        self._op = np.fromiter(map(itemgetter(1), ev), np.int8, n)
        self._aid = np.fromiter(map(itemgetter(2), ev), np.int64, n)
        self._phase = np.fromiter(map(itemgetter(6), ev), np.int64, n)

        # the events of each thread, in order: one stable sort, then slices
        self._by_thread = np.argsort(self._tid, kind="stable")
        self._thread_start = np.searchsorted(self._tid[self._by_thread], np.arange(self.n_threads + 1))

        self.arrays: list[ArrayModel] = [self._array_model(a) for a in trace.arrays]
        out = trace.global_array(OUTPUT) or next((a for a in trace.arrays if a.space == GLOBAL), None)
        self.output: ArrayModel | None = self.arrays[out.aid] if out is not None else None

        self._snapshots: dict = {}  # aid -> (list of per-phase cell lists, stamps of the last one)
        self._writes: dict | None = None  # aid -> event indices of its writes, in event order
        self._by_cell_phase = None  # (order, keys) for events by (aid, phase)
        self._touches: dict = {}
        self._active: dict = {}

        self.wrong_cells: dict[int, WrongCell] = self._wrong_cells(run)
        self.raced: set[int] = {t for t in (run.raced if isinstance(run.raced, list) else ())
                                if type(t) is int and 0 <= t < self.n_threads}
        self.status_codes: np.ndarray = self._statuses()
        self.barrier_lines: dict[int, int] = {}
        for b in trace.barriers:
            self.barrier_lines.setdefault(b.phase, b.line)

    # -- threads ----------------------------------------------------------------------------------
    def where(self, tid: int) -> tuple[tuple, tuple]:
        """(block, thread) of a thread, with the launch's dimensionality."""
        return self.trace.where(tid)

    def tid_of(self, block, thread) -> int:
        block = tuple(block) + (0,) * (3 - len(block))
        thread = tuple(thread) + (0,) * (3 - len(thread))
        return self.trace.tid_of(block, thread)

    def status(self, tid: int) -> str:
        return STATUSES[self.status_codes[tid]]

    def status_counts(self) -> dict[str, int]:
        counts = np.bincount(self.status_codes, minlength=len(STATUSES))
        return {STATUSES[i]: int(c) for i, c in enumerate(counts) if c}

    def stop_reason(self, tid: int) -> str | None:
        return self.trace.stopped.get(tid)

    def n_events(self, tid: int) -> int:
        return int(self._thread_start[tid + 1] - self._thread_start[tid])

    def events_of(self, tid: int) -> list[ThreadEvent]:
        """The thread's accesses in the order it made them."""
        lo, hi = self._thread_start[tid], self._thread_start[tid + 1]
        return [self._event(int(i)) for i in self._by_thread[lo:hi]]

    def active(self, phase: int) -> np.ndarray:
        """A bool per thread: did it access memory in this phase?"""
        mask = self._active.get(phase)
        if mask is None:
            mask = np.zeros(self.n_threads, dtype=bool)
            mask[self._tid[self._phase == phase]] = True
            self._active[phase] = mask
        return mask

    def default_thread(self) -> int:
        """The thread to show first: where the first failure points, else the most troubled one."""
        for f in self.failures:
            if f.block is not None and f.thread is not None:
                tid = self.tid_of(f.block, f.thread)
                if 0 <= tid < self.n_threads:
                    return tid
        if self.n_threads == 0:
            return 0
        worst = int(np.argmax(self.status_codes))
        return worst if self.status_codes[worst] > OK else 0

    # -- arrays -----------------------------------------------------------------------------------
    def inputs(self) -> list[ArrayModel]:
        return [a for a in self.arrays if a.role in ("input", "const")]

    def shared_of(self, block) -> list[ArrayModel]:
        block = tuple(block)
        return [a for a in self.arrays if a.role == "shared" and tuple(a.block) == block]

    def locals_of(self, tid: int) -> list[ArrayModel]:
        block, thread = self.where(tid)
        return [a for a in self.arrays if a.role == "local" and tuple(a.thread) == thread
                and tuple(a.block) == block]

    def values_at(self, aid: int, phase: int) -> list:
        """The array's flat cells at the start of `phase` (0 <= phase <= n_phases; n_phases is the
        end of the launch). Unwritten cells are None. Do not modify the list."""
        phase = max(0, min(phase, self.n_phases))
        snaps = self._snapshots.get(aid)
        if snaps is None:
            info = self.trace.arrays[aid]
            first = list(info.initial) if info.initial is not None else [None] * info.size
            snaps = self._snapshots[aid] = ([first], [-1] * len(first))
        cells_by_phase, stamps = snaps
        while len(cells_by_phase) <= phase:
            k = len(cells_by_phase) - 1  # apply the writes of phase k
            cells = list(cells_by_phase[-1])
            ev = self.trace.events
            for i in self._writes_of(aid, k):
                e = ev[i]
                flat = e[3]
                if i > stamps[flat]:  # the last write in launch order wins, as in Trace.cells_at
                    cells[flat] = e[4]
                    stamps[flat] = i
            cells_by_phase.append(cells)
        return cells_by_phase[phase]

    def values_after(self, aid: int, phase: int) -> list:
        return self.values_at(aid, phase + 1)

    def final(self, aid: int) -> list:
        return self.values_at(aid, self.n_phases)

    def touchers(self, aid: int, phase: int) -> dict[int, tuple[list, list]]:
        """Who touched each cell of the array in this phase: flat -> (readers, writers), tids in
        order of first access; atomics count as writes. Cells nobody touched are absent."""
        key = (aid, phase)
        found = self._touches.get(key)
        if found is None:
            found = {}
            ev = self.trace.events
            for i in self._events_in(aid, phase):
                e = ev[i]
                flat = e[3]
                if not isinstance(flat, int):
                    continue  # out of bounds: no cell
                readers, writers = found.get(flat) or found.setdefault(flat, ([], []))
                who = writers if e[1] == WRITE or e[1] == ATOMIC else readers
                if not who or who[-1] != e[0]:
                    if e[0] not in who:
                        who.append(e[0])
            self._touches[key] = found
        return found

    def cell_marks(self, aid: int, phase: int, tid: int | None) -> list[int]:
        """Per flat cell: WRITTEN_BY_SELECTED, READ_BY_SELECTED, OTHERS (touched only by other
        threads) or UNTOUCHED, for this phase."""
        size = math.prod(self.trace.arrays[aid].shape)
        marks = [UNTOUCHED] * size
        for flat in self.touchers(aid, phase):
            marks[flat] = OTHERS
        if tid is not None and 0 <= tid < self.n_threads:
            ev = self.trace.events
            lo, hi = self._thread_start[tid], self._thread_start[tid + 1]
            idx = self._by_thread[lo:hi]
            idx = idx[(self._aid[idx] == aid) & (self._phase[idx] == phase)]
            for i in idx:
                e = ev[int(i)]
                flat = e[3]
                if not isinstance(flat, int):
                    continue
                if e[1] == WRITE or e[1] == ATOMIC:
                    marks[flat] = WRITTEN_BY_SELECTED
                elif marks[flat] != WRITTEN_BY_SELECTED:
                    marks[flat] = READ_BY_SELECTED
        return marks

    def phase_end_line(self, phase: int) -> int | None:
        """The source line of the barrier that ends this phase (None for the last phase)."""
        return self.barrier_lines.get(phase)

    # -- building ---------------------------------------------------------------------------------
    def _event(self, i: int) -> ThreadEvent:
        e = self.trace.events[i]
        info = self.trace.arrays[e[2]]
        flat = e[3]
        index = tuple(flat) if isinstance(flat, tuple) else info.unravel(flat)
        return ThreadEvent(e[1], e[2], info.name, info.space, index, e[4], e[5], e[6])

    def _array_model(self, info) -> ArrayModel:
        if info.space == GLOBAL:
            role = "output" if info.name == OUTPUT else "input"
        elif info.space == CONST:
            role = "const"
        elif info.space == SHARED:
            role = "shared"
        else:
            role = "local"
        return ArrayModel(info.aid, info.name, info.space, tuple(info.shape), role,
                          tuple(info.block) if info.block is not None else None,
                          tuple(info.thread) if info.thread is not None else None)

    def _writes_of(self, aid: int, phase: int) -> np.ndarray:
        if self._writes is None:
            w = np.flatnonzero((self._op == WRITE) | (self._op == ATOMIC))
            order = np.lexsort((w, self._phase[w], self._aid[w]))
            w = w[order]
            keys = self._aid[w] * (self.n_phases + 1) + self._phase[w]
            self._writes = (w, keys)
        w, keys = self._writes
        key = aid * (self.n_phases + 1) + phase
        lo, hi = np.searchsorted(keys, [key, key + 1])
        return w[lo:hi]

    def _events_in(self, aid: int, phase: int) -> np.ndarray:
        if self._by_cell_phase is None:
            keys = self._aid * (self.n_phases + 1) + self._phase
            order = np.argsort(keys, kind="stable")
            self._by_cell_phase = (order, keys[order])
        order, keys = self._by_cell_phase
        key = aid * (self.n_phases + 1) + phase
        lo, hi = np.searchsorted(keys, [key, key + 1])
        return order[lo:hi]

    def _wrong_cells(self, run) -> dict[int, WrongCell]:
        """The cells the judge found wrong (run.bad, at the puzzle's tolerance), with the verdict's
        own cells when the run carries no mask; none decided here."""
        out = self.output
        if out is None:
            return {}
        cells: dict = {}
        bad, expected, got = run.bad, run.expected, run.got
        if (bad is not None and expected is not None and got is not None
                and np.shape(bad) == np.shape(expected) == np.shape(got) == out.shape):
            exp = np.asarray(expected, dtype=np.float64).ravel()
            val = np.asarray(got, dtype=np.float64).ravel()
            for flat in np.flatnonzero(np.asarray(bad, dtype=bool).ravel()):
                cells[int(flat)] = (_num(exp[flat]), _num(val[flat]))
        else:
            failure = next((f for f in self.failures if f.kind == "wrong_output"
                            and f.array in (None, out.name)), None)
            for d in failure.details if failure is not None else ():
                if isinstance(d, dict) and "index" in d and len(d["index"]) == len(out.shape):
                    flat = int(np.ravel_multi_index(tuple(d["index"]), out.shape)) if out.shape else 0
                    cells[flat] = (d.get("expected"), d.get("got"))
        if not cells:
            return {}
        last: dict = {}
        ev = self.trace.events
        for phase in range(self.n_phases):
            for i in self._writes_of(out.aid, phase):
                flat = ev[i][3]
                if flat in cells and i > last.get(flat, -1):
                    last[flat] = int(i)
        result = {}
        for flat, (exp_v, got_v) in sorted(cells.items()):
            i = last.get(flat)
            result[flat] = WrongCell(flat, out.unravel(flat), exp_v, got_v,
                                     ev[i][0] if i is not None else None,
                                     ev[i][5] if i is not None else None)
        return result

    def _statuses(self) -> np.ndarray:
        codes = np.zeros(self.n_threads, dtype=np.uint8)
        counts = np.bincount(self._tid, minlength=self.n_threads)[:self.n_threads]
        codes[counts > 0] = OK
        for cell in self.wrong_cells.values():
            if cell.tid is not None:
                codes[cell.tid] = WRONG
        if self.raced:
            codes[np.fromiter(self.raced, np.int64, len(self.raced))] = RACED
        oob = (self._op == OOB_READ) | (self._op == OOB_WRITE)
        if oob.any():
            codes[np.unique(self._tid[oob])] = OUT_OF_BOUNDS
        for tid in self.trace.stopped:
            if 0 <= tid < self.n_threads:
                codes[tid] = STOPPED
        return codes


def _num(x: float):
    return float(x) if math.isfinite(x) else str(x)


def build(run) -> GridModel:
    """The pane's model of one ConfigRun (which must carry its trace)."""
    return GridModel(run)


__all__ = ["STATUSES", "STATUS_TITLES", "IDLE", "OK", "WRONG", "RACED", "OUT_OF_BOUNDS", "STOPPED",
           "UNTOUCHED", "OTHERS", "READ_BY_SELECTED", "WRITTEN_BY_SELECTED", "ThreadEvent", "ArrayModel",
           "WrongCell", "GridModel", "build", "fmt_value", "fmt_index"]
