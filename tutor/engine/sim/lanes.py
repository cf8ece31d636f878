"""The threads of a block run together as lanes: each statement once, for every thread that runs it.

The thread-by-thread simulator (launch.py) makes every access of every thread a Python call: a
launch of 4,096 threads costs seconds. Here a block's threads are one numpy vector per variable,
and the kernel's syntax tree is walked once per block: an `if` splits the lanes by a mask, a loop
runs while any lane is still in it (each lane its own trip count), `return`, `break` and
`continue` take lanes out until the function, the loop or the pass ends. An access records the
active lanes' events as arrays; when the block ends they are put in the order the thread-by-thread
simulator makes them (phase by phase, thread by thread, each thread in its program order), so the
trace is the same record, event for event.

It stays exact by refusing what it cannot prove the same. Anything it does not model (warp
primitives, local arrays, printing, a construct it does not know), and anything that goes wrong
(out of bounds, a read of unwritten shared memory, barrier divergence, a Python error, a cell that
two threads touch in one phase with a write, whose values would depend on the order threads run),
raises `Fallback`: the launch is run again thread by thread from its untouched inputs, and that run
gives the verdict and its words. So a correct kernel is fast, and a wrong one is judged as before.
"""

from __future__ import annotations

import ast
import math
import os
from collections import Counter
import operator
import sys

import numpy as np

from ..contested import contested
from ..trace import ATOMIC, READ, SHARED, WRITE, BarrierRecord, LazyEvents
from .fakecuda import ATOMIC_UPDATES, SCALARS, FakeCuda, FakeNumba, ScalarType, check_alignment, dtype_of
from .simarray import _INT_RANGES, KernelTimeout, shape_of

# A launch whose blocks, grouped, hold fewer threads runs thread by thread: a statement's numpy
# calls cost more than the few Python calls they replace (40 threads run twice as fast so).
MIN_THREADS = 128
BLOCK_MIN_THREADS = 32  # the same for a block run alone, where its group could not run together
# A launch whose statements find fewer threads at work than this, on average over 4,096 of them, goes
# thread by thread (a row per thread over a few rows: a numpy call per step for four or five lanes)
FEW_ACTIVE = 16
GROUP_LANES = 2048  # blocks run together, up to this many threads: numpy's cost per call is shared by more
PLACEHOLDER = 1 << 20  # a shared array's id until its group ends (Lanes._name_shared)
# Off with TUTOR_SIM_LANES=0 (benchmarks time a baseline so); tests turn it off, or MIN_THREADS to 1,
# to compare the two simulators
ENABLED = os.environ.get("TUTOR_SIM_LANES", "1") != "0"
TALLY: Counter = Counter()  # launches run as lanes ("lanes"), and each fallback's reason: for tests and bench


def worth_it(tpb: int, blocks: int) -> bool:
    """Whether a launch runs faster as lanes: a group of blocks holds MIN_THREADS lanes or more."""
    return tpb * max(1, min(blocks, GROUP_LANES // tpb)) >= MIN_THREADS


class Fallback(Exception):
    """This launch runs thread by thread: the reason says why (for tests and benchmarks)."""


class OrderFallback(Fallback):
    """Reads that would see other writes in the lanes' order: blocks run one by one may still agree."""


class KernelTimeoutInLanes(Exception):
    """Internal: a timeout, with the place the lanes were at."""


# -- values ------------------------------------------------------------------------------------------
# A value is a Python scalar (the same in every lane), an ndarray with one entry per lane, a tuple
# of values, or one of the objects below. Only the active lanes' entries of an ndarray mean anything.

class LaneArray:
    """A kernel's array: flat numpy storage (float64 or int64, as the thread-by-thread simulator's
    Python floats and ints), C-ordered, with which cells were ever written (shared memory)."""

    __slots__ = ("data", "shape", "strides", "aid", "is_int", "lo", "hi", "written", "space", "sim",
                 "dtype", "readonly", "block_size", "aids")

    def __init__(self, data, shape, aid, is_int, dtype, space, written=None, sim=None, readonly=False):
        self.data, self.shape, self.aid, self.is_int, self.dtype = data, tuple(shape), aid, is_int, dtype
        strides, step = [], 1
        for n in reversed(self.shape):
            strides.append(step)
            step *= n
        self.strides = tuple(reversed(strides))
        self.lo, self.hi = _INT_RANGES.get(dtype, (None, None)) if is_int else (None, None)
        self.written, self.space, self.sim, self.readonly = written, space, sim, readonly
        # a shared array of a group of blocks: each block's cells, one after the other, and each
        # block's array id (a placeholder until the group ends: see Lanes._name_shared)
        self.block_size, self.aids = 0, None

    def coerce(self, value, n):
        """What a store keeps: SimArray._coerce, lane by lane."""
        return _coerce(value, n, self.is_int, self.dtype, self.lo, self.hi)


def _coerce(value, n, is_int, dtype, lo, hi):
    """What a store into an array of this dtype keeps (SimArray._coerce, lane by lane): floats as
    float64; integers truncated from floats and wrapped into the dtype's range (a bool is 0 or 1)."""
    v = np.asarray(value)
    if is_int:
        if v.dtype.kind == "f":
            if not np.isfinite(v).all():
                v = np.where(np.isfinite(v), v, 0)
            v = np.trunc(v)
            if (np.abs(v) >= 2.0 ** 62).any():
                raise Fallback("an integer too large for the lanes")
        v = v.astype(np.int64)
        if lo is not None and ((v < lo) | (v > hi)).any():
            if dtype == "bool":
                v = (v != 0).astype(np.int64)
            else:
                span = hi - lo + 1
                v = (v - lo) % span + lo
    else:
        if v.dtype.kind not in "fiub":
            raise Fallback(f"a store of {v.dtype}")
        v = v.astype(np.float64)
    if v.ndim == 0:
        v = np.full(n, v)
    return v


class LocalLanes:
    """A float local array of every lane, in a run no one watches thread by thread (the
    verifier's: launch.fast_local): as the thread-by-thread run's FastLocal, it traces nothing; a
    read of a cell the lane never wrote, or an index outside it, is for the checked run to judge."""

    __slots__ = ("data", "written", "shape", "strides", "size", "is_int", "dtype", "lo", "hi")

    def __init__(self, n, shape, dtype: str = "float64", is_int: bool = False):
        """`dtype`, `is_int`: an integer array keeps int64 values wrapped into its dtype's range, as
        a store into the thread-by-thread run's checked local array does (_coerce)."""
        self.dtype, self.is_int = dtype, is_int
        self.lo, self.hi = _INT_RANGES.get(dtype, (None, None)) if is_int else (None, None)
        size = 1
        for s in shape:
            size *= s
        self.shape, self.size = shape, size
        strides, step = [], 1
        for k in reversed(shape):
            strides.append(step)
            step *= k
        self.strides = tuple(reversed(strides))
        self.data = np.zeros((n, size), dtype=np.int64 if is_int else np.float64)
        self.written = np.zeros((n, size), dtype=bool)

    def coerce(self, value, n):
        """What a store keeps, as LaneArray.coerce."""
        return _coerce(value, n, self.is_int, self.dtype, self.lo, self.hi)


class LaneDim3:
    """threadIdx: one vector per axis."""

    __slots__ = ("x", "y", "z")

    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z


class Frame:
    """One function's run: its variables, and the lanes that have returned (with what)."""

    __slots__ = ("vars", "partial", "dead", "ret", "valued", "version", "loops", "code_lines", "local_names",
                 "caller", "checked")

    def __init__(self, n, code_lines=frozenset(), local_names=frozenset()):
        self.code_lines = code_lines  # the lines of the function that hold instructions
        self.local_names = local_names  # the names Python makes local to the function
        self.valued = np.zeros(n, dtype=bool)  # the lanes that returned a value
        self.caller = 0  # the line that called it (0: the kernel)
        self.checked: dict = {}  # name -> the mask it was last read under, held in every lane of it
        self.vars: dict = {}
        self.partial: dict = {}  # name -> lanes that hold it, for a name bound in some lanes only
        self.dead = np.zeros(n, dtype=bool)
        self.ret = None
        self.version = 0
        self.loops: list = []  # per enclosing loop: [broken lanes, continued lanes]


_ALLOWED = (
    ast.FunctionDef, ast.arguments, ast.arg, ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If,
    ast.For, ast.While, ast.Break, ast.Continue, ast.Return, ast.Pass, ast.Name, ast.Constant, ast.BinOp,
    ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Call, ast.Attribute, ast.Subscript, ast.Tuple,
    ast.Load, ast.Store, ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.keyword, ast.Index
    if hasattr(ast, "Index") else ast.Load,
)
_WARP_OPS = {"syncwarp": "syncwarp", "shfl_sync": "shfl", "shfl_up_sync": "shfl_up", "shfl_down_sync": "shfl_down",
             "shfl_xor_sync": "shfl_xor", "all_sync": "all", "any_sync": "any", "ballot_sync": "ballot",
             "activemask": "activemask"}
_NOT_MODELLED_CUDA = {"const", "syncthreads_count", "syncthreads_and", "syncthreads_or", "popc", "clz",
                      "ffs", "brev", "fma", "cbrt", "selp"}


def function_tree(fn) -> ast.FunctionDef | None:
    """The syntax tree of a kernel or device function, from its module's text, or None (and
    `why_not(fn)` says why)."""
    if fn in _TREES:
        return _TREES[fn][0]
    tree, why = None, "its source was not found"
    code = getattr(fn, "__code__", None)
    cuda = next((v for v in getattr(fn, "__globals__", {}).values() if isinstance(v, FakeCuda)), None)
    source = cuda._source if cuda is not None else None
    if code is not None and source and not fn.__closure__ and code.co_filename == cuda._filename:
        try:
            module = ast.parse(source)
        except (SyntaxError, ValueError):
            module = None
        for node in ast.walk(module) if module is not None else ():
            if isinstance(node, ast.FunctionDef) and node.name == code.co_name and code.co_firstlineno in (
                    node.lineno, *(d.lineno for d in node.decorator_list)):
                why = _not_plain(node)
                tree = node if why is None else None
                break
    _TREES[fn] = (tree, why)
    return tree


def why_not(fn) -> str | None:
    return _TREES.get(fn, (None, None))[1]


_TREES: dict = {}


def _not_plain(fn: ast.FunctionDef) -> str | None:
    """What in the function the lanes do not model, or None."""
    args = fn.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        return "parameters other than plain names"
    for node in ast.walk(fn):
        if isinstance(node, ast.FunctionDef) and node is not fn:
            return "a function inside a function"
        if not isinstance(node, _ALLOWED):
            return f"a {type(node).__name__} (line {getattr(node, 'lineno', fn.lineno)})"
        if isinstance(node, (ast.For, ast.While)) and node.orelse:
            return f"a loop's else (line {node.lineno})"
        if isinstance(node, ast.Attribute) and node.attr in _NOT_MODELLED_CUDA:
            return f"`{node.attr}` (line {node.lineno})"
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            if not (fn.body and isinstance(fn.body[0], ast.Expr) and fn.body[0].value is node):
                return f"a string (line {node.lineno})"
    return None


# -- the runner ----------------------------------------------------------------------------------------
def run_lanes(launch) -> None:
    """Run every block of `launch` (or its sample) as lanes, writing its trace and outputs; raise
    Fallback, with nothing of the launch changed, where the thread-by-thread run must do it."""
    fn = launch.kernel.py_func
    tree = function_tree(fn)
    if tree is None:
        raise Fallback(f"the kernel: {why_not(fn)}")
    tracer = sys.gettrace()
    sink = getattr(tracer, "lines_sink", None) if tracer is not None else None
    if tracer is not None and sink is None:
        raise Fallback("a line tracer the lanes do not know")
    runner = Lanes(launch, fn, tree)
    if sink is None:
        runner.run()
        return
    follow = getattr(tracer, "line_runs", None)
    if follow is not None:
        if follow.counts or follow.last:  # an earlier launch's counts carry on: thread by thread
            raise Fallback("each warp's runs of each line, after another launch")
        if _lines_shared(tree):  # Python's line events are per line, the lanes' per statement
            raise Fallback("each warp's runs of a line that holds two statements")
        runner.follow = follow
    # the lines that ran, as the tracer would have seen them: the tracer itself is off meanwhile,
    # or it would follow every call of this module
    runner.lines = set()
    sys.settrace(None)
    try:
        runner.run()
    finally:
        sys.settrace(tracer)
    sink |= runner.lines


class Lanes:
    def __init__(self, launch, fn, tree):
        self.launch, self.fn, self.tree = launch, fn, tree
        self.globals = fn.__globals__
        builtins = self.globals.get("__builtins__", {})
        self.builtins = builtins if isinstance(builtins, dict) else vars(builtins)
        self.cuda = launch.cuda
        bx, by, bz = launch.block
        self.tpb = bx * by * bz
        self.max_events = launch.max_events
        self.n_events = 0
        self.line = tree.lineno
        self.stmt = None  # the statement running now
        self._mask = self._lanes = None  # lanes_of's last mask and its lanes
        self.call_line = 0
        self.lines = None  # the lines that ran, where someone asks (run_lanes)
        self.follow = None  # a LineRuns (sim/linecounts.py): each warp's runs of each line, counted here
        self.atomic_names = {id(getattr(self.cuda.atomic, name)): name for name in ATOMIC_UPDATES}

    def _setup(self, blocks: int):
        """Lanes for `blocks` blocks at once: block k's threads are lanes k * tpb to (k + 1) * tpb."""
        bx, by, _ = self.launch.block
        tpb = self.tpb
        self.B = blocks
        self.n = n = tpb * blocks
        lin = np.tile(np.arange(tpb, dtype=np.int64), blocks)
        self.lin = lin
        self.blk = np.repeat(np.arange(blocks, dtype=np.int64), tpb)
        self.tidx = LaneDim3(lin % bx, (lin // bx) % by, lin // (bx * by))
        self.all = np.ones(n, dtype=bool)
        self.none = np.zeros(n, dtype=bool)

    def _load_args(self):
        """The launch's arguments as lanes see them: copies, so that a run that falls back leaves
        the launch's own arrays as they were."""
        self.args = []
        self.globals_arrays = []
        for arg in self.launch.args:
            if hasattr(arg, "aid") and hasattr(arg, "data"):
                self.args.append(self._from_sim(arg))
            elif isinstance(arg, (int, float, bool)):
                self.args.append(arg)
            else:
                raise Fallback(f"an argument of type {type(arg).__name__}")

    def _from_sim(self, sim) -> LaneArray:
        if sim.offset != 0 or sim.dtype in ("bool", "uint64") or sim.readonly or sim.quiet:
            raise Fallback("an argument the lanes do not hold")
        data = sim.data
        if sim.is_int:
            if not all(type(v) is int for v in data):
                raise Fallback("an integer array with other values")
            store = np.array(data, dtype=np.int64)
        else:
            try:
                store = np.array(data, dtype=np.float64)
            except (TypeError, ValueError):
                raise Fallback("an array with unwritten cells") from None
        la = LaneArray(store, sim.shape, sim.aid, sim.is_int, sim.dtype, "global", sim=sim)
        size = 1
        for s in la.shape:
            size *= s
        if la.strides != tuple(sim.strides) or size != len(data):
            raise Fallback("a strided argument")
        self.globals_arrays.append(la)
        return la

    # -- launch ------------------------------------------------------------------------------
    def run(self):
        """Groups of blocks as one set of lanes (the blocks of a group run at once, which is the
        same as one after the other wherever no cell's reads would see other writes: _check_order);
        where a group cannot, block by block; where a block cannot, Fallback."""
        launch = self.launch
        group = max(1, min(launch.blocks_total, GROUP_LANES // self.tpb))
        if group > 1:
            try:
                self._run_all(group)
                return
            except OrderFallback as e:  # blocks that meet in global memory: one after the other, then
                TALLY[f"blocks one by one: {e}"] += 1
                if self.tpb < BLOCK_MIN_THREADS:
                    raise  # one small block at a time is faster thread by thread
        self._run_all(1)

    def _run_all(self, group: int):
        launch = self.launch
        trace = launch.trace
        n_arrays = len(trace.arrays)
        self._load_args()
        self.block_events: list = []  # per group run: the events, in order
        self.barriers: list = []
        self.n_events = 0
        self.steps = self.busy = 0  # statements run, and the lanes at work in them
        self.kept_counts: list = []
        if self.follow is not None:
            from collections import defaultdict

            trace.line_runs = defaultdict(set)
        try:
            if launch.sample is None:
                gx, gy, gz = launch.grid
                every = [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]
                for k in range(0, len(every), group):
                    self.run_group(every[k:k + group])
            else:
                self._run_sample(group)
        except Fallback:
            del trace.arrays[n_arrays:]
            launch._shared = {}
            launch.ran_blocks = None
            trace.line_runs = None
            raise
        except KernelTimeoutInLanes as e:
            self._timeout(e.args[0])
            self._hand_counts()
            return
        except (RecursionError, MemoryError):
            del trace.arrays[n_arrays:]
            launch._shared = {}
            launch.ran_blocks = None
            raise Fallback("too deep or too large for the lanes") from None
        self._keep_events()
        self._hand_counts()
        trace.barriers.extend(self.barriers)
        for la in self.globals_arrays:
            sim = la.sim
            sim.data[:] = la.data.tolist()

    def _keep_events(self):
        """The launch's events, as columns (trace.LazyEvents): the blocks' in the order they ran.
        Each group's columns are taken in its thread order straight into the launch's arrays (one
        pass per column, not a permutation and then a concatenation)."""
        groups = [g for g in self.block_events if g is not None]
        if not groups:
            return
        n = sum(len(g["order"]) for g in groups)
        cols = {}
        for key in ("tid", "op", "aid", "flat", "line", "phase", "wphase"):
            out = np.empty(n, dtype=np.int64)
            at = 0
            for g in groups:
                k = len(g["order"])
                got = g["cols"].get(key)
                if got is None:  # no warp primitive ran: warp phase 0
                    out[at:at + k] = 0
                else:
                    np.take(got, g["order"], out=out[at:at + k], mode="clip")  # clip: no checking copy
                at += k
            cols[key] = out
        values = [g["cols"]["value"] for g in groups]
        if all(isinstance(v, np.ndarray) for v in values) and len({v.dtype.kind for v in values}) == 1:
            out = np.empty(n, dtype=np.result_type(*values))
            at = 0
            for g, v in zip(groups, values):
                k = len(g["order"])
                np.take(v, g["order"], out=out[at:at + k], mode="clip")
                at += k
            cols["value"] = out
        else:  # floats and ints: each keeps its Python type, as the thread-by-thread run's values do
            every: list = []
            for g, v in zip(groups, values):
                listed = v.tolist() if isinstance(v, np.ndarray) else v
                every += [listed[i] for i in g["order"].tolist()]
            cols["value"] = every
        self.launch.trace.events = self.launch.events = LazyEvents(cols)

    def _run_sample(self, group: int):
        import time

        launch = self.launch
        sample = launch.sample
        order = sample.order(launch.grid)
        until = None if sample.seconds is None else time.monotonic() + sample.seconds
        launch.ran_blocks = []
        for k in range(0, len(order), group):
            if until is not None and k >= sample.least and time.monotonic() > until:
                break
            blocks = order[k:k + group]
            self.run_group(blocks)
            launch.ran_blocks += blocks
        if len(launch.ran_blocks) == launch.blocks_total:
            launch.ran_blocks = None

    def _timeout(self, exc):
        """The watchdog stopped the kernel while lanes ran: the thread-by-thread words for it, the
        thread being the first lane still running."""
        launch = self.launch
        self._keep_events()
        lanes = np.flatnonzero(self.current_mask) if self.current_mask is not None else [0]
        lane = int(lanes[0]) if len(lanes) else 0
        k = lane // self.tpb
        # as block after block: the group's blocks up to this one passed their barriers, and this
        # one's threads stop
        self._keep_barriers(k + 1)
        launch.trace.barriers.extend(self.barriers)
        block = self.group[k][:launch.grid_nd]
        thread = (int(self.tidx.x[lane]), int(self.tidx.y[lane]), int(self.tidx.z[lane]))[:launch.block_nd]
        launch.failures.append(launch.timeout_failure(exc, block, thread, self.line))
        base = int(self.block_bases[k])
        launch.trace.stopped[base + int(self.lin[lane])] = "stopped by an error"
        for other in range(self.tpb):
            launch.trace.stopped.setdefault(base + other, "stopped: the launch ended early")

    # -- a block ---------------------------------------------------------------------------------
    def run_group(self, blocks: list):
        launch = self.launch
        if getattr(self, "B", None) != len(blocks):
            self._setup(len(blocks))
        launch.block_pos = blocks[0]
        launch._shared = {}
        self.group = blocks
        if len(blocks) == 1:
            self.bidx = blocks[0]
        else:  # each lane's own block
            self.bidx = tuple(np.repeat(np.array([b[d] for b in blocks], dtype=np.int64), self.tpb) for d in range(3))
        gx, gy, _ = launch.grid
        self.block_bases = np.array([(b[0] + b[1] * gx + b[2] * gx * gy) * self.tpb for b in blocks], dtype=np.int64)
        self.phases = np.zeros(len(blocks), dtype=np.int64)  # each block's barriers passed
        self.phases_even = True  # every block of the group at the same phase
        # each lane's warp primitives passed (the thread-by-thread run resumes threads round by round
        # at them), and syncwarps passed (the trace's warp phase)
        self.rounds = np.zeros(self.n, dtype=np.int64)
        self.wphases = np.zeros(self.n, dtype=np.int64)
        self.kernel_frame = None
        self.chunks: list = []  # (lanes, op, aid, flats, values, line, phase)
        self.shared: dict = {}
        self.allocs: list = []  # the group's shared arrays, in the order they were made
        self.block_allocs: list = [[] for _ in blocks]  # per block: which of them it made, in order
        self.group_barriers: list = [[] for _ in blocks]  # per block: (phase, line) of each barrier it passed
        self.warped = False  # whether a warp primitive ran yet
        if self.follow is not None:  # each lane's runs so far of each line (LineRuns' counts)
            self.line_counts: dict = {}
            self.last_line = np.full(self.n, -1, dtype=np.int64)
            self.warp_keys = self.block_bases[self.blk] // self.tpb * 64 + (self.lin >> 5)
        self.current_mask = None
        frame = Frame(self.n, _code_lines(self.fn), _local_names(self.tree))
        self.kernel_frame = frame
        if self.lines is not None:
            self.lines.add(self.fn.__code__.co_firstlineno)
        params = self.tree.args.args
        if len(params) != len(self.args):
            raise Fallback("arguments and parameters differ in number")
        for p, a in zip(params, self.args):
            frame.vars[p.arg] = a
        try:
            with np.errstate(all="ignore"):
                self.body(self.tree.body, self.all, frame)
        except (Fallback, KeyboardInterrupt, SystemExit):
            raise
        except KernelTimeout as e:
            launch.running = False  # the watchdog alarms every 50 ms past its deadline: not in here
            self._name_shared()
            self.block_events.append(self._ordered(self._gather()))
            raise KernelTimeoutInLanes(e) from None
        except BaseException as e:
            raise Fallback(f"{type(e).__name__}: {e}") from None
        gathered = self._gather()
        self._check_order(gathered)
        self._name_shared()
        self.block_events.append(self._ordered(gathered))
        if self.follow is not None:  # into LineRuns once the whole launch has run as lanes
            self.kept_counts.append(self._counts_of_group())
        self._keep_barriers(len(blocks))

    def _keep_barriers(self, blocks: int):
        """The barriers the group's first `blocks` blocks passed, block by block, as they would have run."""
        nd = self.launch.grid_nd
        for b, passed in zip(self.group[:blocks], self.group_barriers):
            self.barriers += [BarrierRecord(b[:nd], phase, line, "syncthreads") for phase, line in passed]

    def _name_shared(self):
        """The group's shared arrays get their ids as the thread-by-thread run gives them: block
        after block, each block's in the order its threads made them; the events' placeholders
        become those ids."""
        launch = self.launch
        self.remap = {}
        for k, b in enumerate(self.group):
            launch.block_pos = b
            launch._shared = {}
            for n in self.block_allocs[k]:
                (shape, st, line, dynamic), la = self.allocs[n]
                sim = launch._dynamic_shared(st, line) if dynamic else \
                    launch._new_array(shape, st, SHARED, line, block=b[:launch.grid_nd])
                self.remap[int(la.aids[k])] = sim.aid

    def _columns(self, chunks, key):
        """One field of every chunk, an entry per access (aid, phase, round and warp phase may be
        one per lane)."""
        sizes = [len(c[0]) for c in chunks]
        if key not in (2, 6, 7, 8):
            return np.repeat(np.array([c[key] for c in chunks], dtype=np.int64), sizes)
        per_lane = [n for n, c in enumerate(chunks) if type(c[key]) is np.ndarray]
        out = np.repeat(np.array([0 if type(c[key]) is np.ndarray else c[key] for c in chunks], dtype=np.int64), sizes)
        if per_lane:
            starts = np.cumsum([0] + sizes).tolist()
            for n in per_lane:
                out[starts[n]:starts[n + 1]] = chunks[n][key]
        return out

    def _thread_order(self, lanes, phases, rounds=None):
        """Each access's place in the thread-by-thread run: block by block, then phase by phase,
        then round by round of warp primitives, then thread by thread (ties: program order, kept
        by a stable sort)."""
        span = int(phases.max()) + 1 if len(phases) else 1
        if rounds is None or not len(rounds):
            return ((lanes // self.tpb) * span + phases) * self.tpb + lanes % self.tpb
        turns = int(rounds.max()) + 1
        return (((lanes // self.tpb) * span + phases) * turns + rounds) * self.tpb + lanes % self.tpb

    def _gather(self) -> dict | None:
        """The group's accesses as arrays, and their order in the thread-by-thread run."""
        chunks = self.chunks
        if not chunks:
            return None
        lanes = np.concatenate([c[0] for c in chunks])
        phases = self._columns(chunks, 6)
        rounds = self._columns(chunks, 7) if self.warped else None
        return {"lanes": lanes, "phases": phases, "aids": self._columns(chunks, 2), "ops": self._columns(chunks, 1),
                "flats": np.concatenate([c[3] for c in chunks]),
                "order": np.argsort(self._thread_order(lanes, phases, rounds), kind="stable")}

    def _ordered(self, g: dict | None) -> dict | None:
        """The group's events as columns, in the order the lanes made them, and the order the
        thread-by-thread simulator makes them in (block by block, phase by phase, thread by
        thread, each thread's in its program order); _keep_events puts them in that order."""
        if g is None:
            return None
        chunks = self.chunks
        aids = g["aids"]
        if self.remap:
            placeholder = aids >= PLACEHOLDER
            if placeholder.any():
                table = np.zeros(max(self.remap) - PLACEHOLDER + 1, dtype=np.int64)
                for temp, real in self.remap.items():
                    table[temp - PLACEHOLDER] = real
                aids = np.where(placeholder, table[np.where(placeholder, aids - PLACEHOLDER, 0)], aids)
        lanes = g["lanes"]
        cols = {
            "tid": self.block_bases[lanes // self.tpb] + lanes % self.tpb,
            "op": g["ops"],
            "aid": aids,
            "flat": g["flats"],
            "line": self._columns(chunks, 5),
            "phase": g["phases"],
        }
        if self.warped:
            cols["wphase"] = self._columns(chunks, 8)
        kinds = {c[4].dtype.kind for c in chunks}
        if len(kinds) == 1:
            cols["value"] = np.concatenate([c[4] for c in chunks])
        else:  # floats and ints: each keeps its Python type, as the thread-by-thread run's values do
            every: list = []
            for c in chunks:
                every += c[4].tolist()
            cols["value"] = every
        return {"order": g["order"], "cols": cols}

    def _check_order(self, g: dict | None):
        """Raise Fallback where the order threads run in could change a value: a cell that some
        thread writes (or updates atomically), where an access would come after another number of
        its writes in the thread-by-thread order (block by block, phase by phase, thread by thread)
        than in the lanes'. Where none does, every read sees the same write and the writes land in
        the same order, so a race the lanes ran is the same race, with the same values, for the
        detectors."""
        if g is None:
            return
        writes = g["ops"] != READ
        if not writes.any():
            return
        aids = g["aids"]
        lanes = g["lanes"]
        # only a cell that one thread writes and another touches, in its phase or from another
        # block, can read differently in another order
        chosen = contested(aids, g["flats"], lanes // self.tpb, g["phases"], lanes, writes,
                           aids < PLACEHOLDER)  # a shared array is one block's: no other block reaches it
        if not chosen.any():
            return
        cells = g["flats"] + (aids << 40)
        as_threads = g["order"][chosen[g["order"]]]
        as_threads = as_threads[np.argsort(cells[as_threads], kind="stable")]  # by cell, then as threads run
        as_lanes = np.flatnonzero(chosen)
        as_lanes = as_lanes[np.argsort(cells[as_lanes], kind="stable")]  # by cell, then as the lanes ran
        n = len(cells)
        if (_writes_before(as_threads, cells, writes, n) != _writes_before(as_lanes, cells, writes, n)).any():
            raise OrderFallback("a cell whose reads would see other writes, thread by thread")

    def lanes_of(self, m):
        """np.flatnonzero(m), for the mask the statement runs under (asked for at every access)."""
        if m is self._mask:
            return self._lanes
        self._mask, self._lanes = m, np.flatnonzero(m)
        return self._lanes

    def record(self, mask, op, arr, flats, values, line):
        lanes = self.lanes_of(mask)
        self.n_events += len(lanes)
        if self.n_events > self.max_events:  # thread by thread, the watchdog words it
            raise Fallback(f"more than {self.max_events:,} memory accesses")
        aid = arr.aid if arr.aids is None else arr.aids[self.blk[lanes]]
        phase = int(self.phases[0]) if self.B == 1 or self.phases_even else self.phases[self.blk[lanes]]
        if self.warped:
            self.chunks.append((lanes, op, aid, flats, values, line, phase, self.rounds[lanes], self.wphases[lanes]))
        else:
            self.chunks.append((lanes, op, aid, flats, values, line, phase, 0, 0))

    # -- statements ------------------------------------------------------------------------------
    def body(self, stmts, mask, frame):
        version = -1
        loops = frame.loops
        eff = mask
        active = 0
        for st in stmts:
            if frame.version != version:
                version = frame.version
                eff = mask & ~frame.dead
                if loops:
                    brk, cont = loops[-1]
                    eff = eff & ~brk & ~cont
                active = int(np.count_nonzero(eff))
                if not active:
                    return
            self.steps += 1
            self.busy += active
            if not self.steps & 4095 and self.busy < FEW_ACTIVE * self.steps:
                raise Fallback(f"{self.busy / self.steps:.1f} threads at work per statement: faster one by one")
            self.line = st.lineno
            self.current_mask = eff
            if self.lines is not None:
                self.lines.update(_lines_of(st, frame.code_lines))
                if self.follow is not None:
                    self.ran(st, eff, frame)
            self.stmt = st
            self.statement(st, eff, frame)

    def ran(self, st, m, frame):
        """A line event of statement `st` for the lanes of m, counted as LineRuns counts it
        (sim/linecounts.py): a statement of several lines once per stretch, each loop header's
        runs, and each warp's distinct (phase, line, caller, trip)."""
        if not _lines_of(st, frame.code_lines):
            return  # nothing of it runs (a docstring): no line event
        follow = self.follow
        line = st.lineno
        if line in follow.first_line or line in follow.spans:
            m = m & (self.last_line != line)
        lanes = np.flatnonzero(m)
        if not len(lanes):
            return
        self.last_line[lanes] = line
        headers = follow.anchors.get(line)
        counts = self.line_counts
        if headers is None or headers[-1] == line:
            c = counts.get(line)
            if c is None:
                c = counts[line] = np.zeros(self.n, dtype=np.int64)
            c[lanes] += 1
        parts = [counts[line][lanes]] if headers is None else \
            [counts[h][lanes] if h in counts else np.zeros(len(lanes), dtype=np.int64) for h in headers]
        phases = self.phases[self.blk[lanes]]
        runs = self.launch.trace.line_runs
        caller = frame.caller
        warps = self.warp_keys[lanes]  # non-decreasing, as the lanes are
        if all(int(c[0]) == int(c[-1]) and not (c != c[0]).any() for c in (phases, *parts)):
            # every lane at the same phase and trip (a uniform loop): one run per warp
            key = (int(phases[0]), line, caller, int(parts[0][0]) if headers is None else tuple(int(c[0]) for c in parts))
            firsts = np.flatnonzero(np.diff(warps, prepend=-1))
            for w in warps[firsts].tolist():
                runs[w].add(key)
            return
        keys = np.unique(np.stack([warps, phases, *parts]), axis=1)
        for w, p, *trip in keys.T.tolist():
            runs[w].add((p, line, caller, trip[0] if headers is None else tuple(trip)))

    def _hand_counts(self):
        if self.follow is not None:
            for counts, last in self.kept_counts:
                self.follow.counts.update(counts)
                self.follow.last.update(last)

    def _counts_of_group(self) -> tuple:
        """The group's counts and last lines, by thread, for LineRuns' own (a later launch goes on
        from them): kept aside until the launch ends, since a later group may still fall back."""
        tids = (self.block_bases[self.blk] + self.lin).tolist()
        counts = {(tids[lane], line): int(c[lane]) for line, c in self.line_counts.items()
                  for lane in np.flatnonzero(c).tolist()}
        last = {tids[lane]: int(self.last_line[lane]) for lane in np.flatnonzero(self.last_line >= 0).tolist()}
        return counts, last

    def statement(self, st, m, frame):
        kind = type(st)
        if kind is ast.Assign:
            value = self.expr(st.value, m, frame)
            for target in st.targets:
                self.assign(target, value, m, frame)
        elif kind is ast.Expr:
            if isinstance(st.value, ast.Constant):
                return
            self.expr(st.value, m, frame)
        elif kind is ast.AugAssign:
            self.augassign(st, m, frame)
        elif kind is ast.If:
            c = self.truth(self.expr(st.test, m, frame), m)
            yes = m & c
            no = m & ~c
            if yes.any():
                self.body(st.body, yes, frame)
            if st.orelse and no.any():
                self.body(st.orelse, no, frame)
        elif kind is ast.For:
            self.for_loop(st, m, frame)
        elif kind is ast.While:
            self.while_loop(st, m, frame)
        elif kind is ast.Break:
            frame.loops[-1][0] |= m
            frame.version += 1
        elif kind is ast.Continue:
            frame.loops[-1][1] |= m
            frame.version += 1
        elif kind is ast.Return:
            if st.value is not None:
                value = self.expr(st.value, m, frame)
                frame.ret = value if frame.ret is None else self.merge(frame.ret, value, m)
                frame.valued = frame.valued | m
            frame.dead = frame.dead | m
            frame.version += 1
        elif kind is ast.AnnAssign:
            if st.value is None:
                return
            self.assign(st.target, self.expr(st.value, m, frame), m, frame)
        elif kind is ast.Pass:
            return
        else:
            raise Fallback(f"a {kind.__name__} statement")

    def for_loop(self, st, m, frame):
        it = st.iter
        if isinstance(it, ast.Tuple):  # `for off in (16, 8, 4, 2, 1)`: the same values in every lane
            values = self.expr(it, m, frame)
            if not all(type(v) in (int, float, bool) for v in values):
                raise Fallback("a loop over a tuple of values that differ between threads")
            self._loop_over(st, values, m, frame)
            return
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and not it.keywords
                and self.lookup(it.func.id, m, frame) is range and 1 <= len(it.args) <= 3):
            raise Fallback("a loop over something other than range()")
        bounds = [self.expr(a, m, frame) for a in it.args]
        for b in bounds:
            if isinstance(b, np.ndarray):
                if b.dtype.kind not in "iu":
                    raise Fallback("range() of a non-integer")
            elif type(b) is not int:
                raise Fallback("range() of a non-integer")
        if len(bounds) == 1:
            start, stop, step = 0, bounds[0], 1
        elif len(bounds) == 2:
            start, stop, step = bounds[0], bounds[1], 1
        else:
            start, stop, step = bounds
        if isinstance(step, np.ndarray):
            steps = step[m]
            if len(steps) == 0 or (steps != steps[0]).any():
                raise Fallback("a range() step that differs between threads")
            step = int(steps[0])
        if step == 0:
            raise Fallback("range() step 0")
        if not isinstance(start, np.ndarray) and not isinstance(stop, np.ndarray):
            self._loop_over(st, range(start, stop, step), m, frame)
            return
        # each lane its own trip count
        start = np.broadcast_to(np.asarray(start, dtype=np.int64), (self.n,))
        stop = np.broadcast_to(np.asarray(stop, dtype=np.int64), (self.n,))
        if step > 0:
            trips = np.maximum(0, (stop - start + step - 1) // step)
        else:
            trips = np.maximum(0, (start - stop - step - 1) // (-step))
        most = int(trips[m].max()) if m.any() else 0
        frame.loops.append([self.none.copy(), self.none.copy()])
        try:
            for k in range(most):
                live = m & ~frame.dead & ~frame.loops[-1][0] & (trips > k)
                if not live.any():
                    break
                frame.loops[-1][1] = self.none.copy()
                frame.version += 1
                self.assign(st.target, start + k * step, live, frame)
                self.body(st.body, live, frame)
                if self.follow is not None:
                    self.ran(st, live & ~frame.dead & ~frame.loops[-1][0], frame)
        finally:
            frame.loops.pop()
            frame.version += 1

    def _loop_over(self, st, values, m, frame):
        """A loop whose values are the same in every lane (a range of uniform bounds, a tuple)."""
        frame.loops.append([self.none.copy(), self.none.copy()])
        try:
            for v in values:
                live = m & ~frame.dead & ~frame.loops[-1][0]
                if not live.any():
                    break
                frame.loops[-1][1] = self.none.copy()
                frame.version += 1
                if self.lines is not None:
                    self.lines.update(_lines_of(st, frame.code_lines))
                self.assign(st.target, v, live, frame)
                self.body(st.body, live, frame)
                if self.follow is not None:  # back to the header: a line event for every lane still in
                    self.ran(st, live & ~frame.dead & ~frame.loops[-1][0], frame)
        finally:
            frame.loops.pop()
            frame.version += 1

    def while_loop(self, st, m, frame):
        frame.loops.append([self.none.copy(), self.none.copy()])
        inside = m
        first = True
        try:
            while True:
                live = inside & ~frame.dead & ~frame.loops[-1][0]
                if not live.any():
                    break
                self.line = st.lineno
                self.current_mask = live
                if self.lines is not None:
                    self.lines.update(_lines_of(st, frame.code_lines))
                    if self.follow is not None and not first:  # the test again (the first was the statement's)
                        self.ran(st, live, frame)
                first = False
                c = self.truth(self.expr(st.test, live, frame), live)
                inside = live & c
                if not inside.any():
                    break
                frame.loops[-1][1] = self.none.copy()
                frame.version += 1
                self.body(st.body, inside, frame)
        finally:
            frame.loops.pop()
            frame.version += 1

    def augassign(self, st, m, frame):
        target = st.target
        op = _BINOPS.get(type(st.op))
        if op is None:
            raise Fallback("an operator the lanes do not model")
        if isinstance(target, ast.Name):
            old = self.load_name(target.id, m, frame)
            self.assign(target, self.binop(op, old, self.expr(st.value, m, frame), m, type(st.op)), m, frame)
        elif isinstance(target, ast.Subscript):
            arr, flats = self.address(target, m, frame)
            old = self.read(arr, flats, m, target.lineno)
            new = self.binop(op, old, self.expr(st.value, m, frame), m, type(st.op))
            self.write(arr, flats, new, m, target.lineno)
        else:
            raise Fallback("an augmented assignment to an attribute")

    def assign(self, target, value, m, frame):
        kind = type(target)
        if kind is ast.Name:
            name = target.id
            full = m.all()
            if full:
                frame.vars[name] = value
                frame.partial.pop(name, None)
                return
            old = frame.vars.get(name)
            if type(value) is LocalLanes:  # each lane's own array: the lanes in m get a fresh one
                if old is None:
                    frame.vars[name] = value
                    frame.partial[name] = m.copy()
                    return
                if type(old) is not LocalLanes or old.shape != value.shape or old.dtype != value.dtype:
                    raise Fallback("a name holding a local array in some threads only")
                old.data[m] = 0
                old.written[m] = False
            elif old is None:
                # an array (the same object in every lane) is bound as it is; a number spreads
                frame.vars[name] = value if type(value) is LaneArray else self.spread(value)
                frame.partial[name] = m.copy()
                return
            frame.vars[name] = self.merge(old, value, m)
            held = frame.partial.get(name)
            if held is not None:
                held = held | m
                if held.all():
                    frame.partial.pop(name)
                else:
                    frame.partial[name] = held
        elif kind is ast.Tuple:
            if not isinstance(value, tuple) or len(value) != len(target.elts):
                raise Fallback("an unpacking the lanes do not model")
            for t, v in zip(target.elts, value):
                self.assign(t, v, m, frame)
        elif kind is ast.Subscript:
            arr, flats = self.address(target, m, frame)
            self.write(arr, flats, value, m, target.lineno)
        else:
            raise Fallback("an assignment to an attribute")

    def spread(self, value):
        if isinstance(value, tuple):
            return tuple(self.spread(v) for v in value)
        if isinstance(value, (LaneArray, LaneDim3)) or not _is_number(value):
            raise Fallback("an object bound in some threads only")
        return np.broadcast_to(np.asarray(value), (self.n,)).copy()

    def merge(self, old, new, m):
        if m.all() or old is new:
            return new
        if isinstance(old, tuple) or isinstance(new, tuple):
            if not (isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new)):
                raise Fallback("a name holding a tuple in some threads only")
            return tuple(self.merge(o, v, m) for o, v in zip(old, new))
        if not (_is_number(old) and _is_number(new)):
            if old is new:
                return old
            raise Fallback("an object that differs between threads")
        return np.where(m, new, old)

    # -- expressions -------------------------------------------------------------------------------
    def expr(self, node, m, frame):
        kind = type(node)
        if kind is ast.Name:
            return self.load_name(node.id, m, frame)
        if kind is ast.Constant:
            v = node.value
            if type(v) in (int, float, bool):
                return v
            raise Fallback(f"a constant of type {type(v).__name__}")
        if kind is ast.BinOp:
            op = _BINOPS.get(type(node.op))
            if op is None:
                raise Fallback("an operator the lanes do not model")
            left = self.expr(node.left, m, frame)
            return self.binop(op, left, self.expr(node.right, m, frame), m, type(node.op))
        if kind is ast.Subscript:
            base = self.expr(node.value, m, frame)
            if isinstance(base, tuple):
                k = self.expr(node.slice, m, frame)
                if type(k) is not int:
                    raise Fallback("a tuple indexed by a per-thread value")
                return base[k]
            arr, flats = self.address(node, m, frame, base)
            return self.read(arr, flats, m, node.lineno)
        if kind is ast.Attribute:
            return self.attribute(self.expr(node.value, m, frame), node.attr)
        if kind is ast.Call:
            return self.call(node, m, frame)
        if kind is ast.Compare:
            return self.compare(node, m, frame)
        if kind is ast.BoolOp:
            return self.boolop(node, m, frame)
        if kind is ast.UnaryOp:
            v = self.expr(node.operand, m, frame)
            op = type(node.op)
            if op is ast.Not:
                if isinstance(v, np.ndarray):
                    return ~self.truth(v, m)
                return not v
            if op is ast.USub:
                if isinstance(v, np.ndarray) and v.dtype.kind == "i" and (v[m] == np.iinfo(np.int64).min).any():
                    raise Fallback("the negation of the smallest int64")
                return -v if not isinstance(v, (bool, np.ndarray)) or not _is_bool(v) else -np.asarray(v, np.int64)
            if op is ast.UAdd:
                return +v if not _is_bool(v) else np.asarray(v, np.int64) + 0
            if op is ast.Invert:
                if _kind(v) not in "iub":
                    raise Fallback("~ of a float")
                if _is_bool(v):
                    return ~np.asarray(v, np.int64) if isinstance(v, np.ndarray) else ~int(v)
                return ~v
        if kind is ast.IfExp:
            c = self.truth(self.expr(node.test, m, frame), m)
            yes, no = m & c, m & ~c
            a = self.expr(node.body, yes, frame) if yes.any() else None
            b = self.expr(node.orelse, no, frame) if no.any() else None
            if a is None:
                return b
            if b is None:
                return a
            return self.merge(b, a, c)
        if kind is ast.Tuple:
            return tuple(self.expr(e, m, frame) for e in node.elts)
        raise Fallback(f"a {kind.__name__} expression")

    def load_name(self, name, m, frame):
        vars_ = frame.vars
        if name in vars_:
            held = frame.partial.get(name)
            if held is not None and frame.checked.get(name) is not m:
                if (m & ~held).any():
                    raise Fallback(f"`{name}` read where it was never set")
                frame.checked[name] = m  # read under this mask before: set in every lane of it
            return vars_[name]
        return self.lookup(name, m, frame)

    def lookup(self, name, m, frame):
        if name in frame.vars:
            return frame.vars[name]
        if name in frame.local_names:
            raise Fallback(f"`{name}` read before any thread set it (Python's UnboundLocalError)")
        if name in self.globals:
            value = self.globals[name]
            if isinstance(value, np.ndarray):
                raise Fallback(f"the module's array `{name}`")
            return value
        if name in self.builtins:
            return self.builtins[name]
        raise Fallback(f"an unknown name `{name}`")

    def attribute(self, obj, attr):
        if isinstance(obj, FakeCuda):
            if attr == "threadIdx":
                return self.tidx
            if attr == "blockIdx":
                return _Dim(self.bidx) if self.B == 1 else LaneDim3(*self.bidx)
            if attr == "blockDim":
                return _Dim(self.launch.block)
            if attr == "gridDim":
                return _Dim(self.launch.grid)
            if attr == "warpsize":
                return 32
            if attr == "laneid":
                return self.lin % 32
            if attr == "local":
                return obj.local
            if attr in ("shared", "atomic", "grid", "gridsize", "syncthreads", "threadfence",
                        "threadfence_block", "threadfence_system", "lanemask_lt") or attr in _SCALAR_NAMES \
                    or attr in _WARP_OPS:
                return getattr(obj, attr)
            raise Fallback(f"cuda.{attr}")
        if isinstance(obj, LaneDim3):
            if attr in ("x", "y", "z"):
                return getattr(obj, attr)
            raise Fallback(f"threadIdx.{attr}")
        if isinstance(obj, _Dim):
            return obj.get(attr)
        if isinstance(obj, LaneArray):
            if attr == "shape":
                return obj.shape
            if attr == "size":
                return int(np.prod(obj.shape)) if obj.shape else 1
            if attr == "ndim":
                return len(obj.shape)
            raise Fallback(f"array.{attr}")
        if isinstance(obj, FakeNumba):
            if attr == "cuda":
                return obj.cuda
            if attr in _SCALAR_NAMES:
                return getattr(obj, attr)
            raise Fallback(f"numba.{attr}")
        if obj is math:
            if attr in _MATH or attr in ("pi", "e", "inf", "nan"):
                return getattr(math, attr)
            raise Fallback(f"math.{attr}")
        if (obj is self.cuda.shared or obj is self.cuda.local) and attr == "array":
            return obj.array
        if isinstance(obj, LocalLanes):
            if attr == "shape":
                return obj.shape
            if attr == "size":
                return obj.size
            if attr == "ndim":
                return len(obj.shape)
            raise Fallback(f"local array.{attr}")
        if obj is self.cuda.atomic and attr in ATOMIC_UPDATES:
            return getattr(obj, attr)
        if type(obj).__name__ == "_Namespace" and attr in _SCALAR_NAMES:
            return getattr(obj, attr)
        raise Fallback(f"the attribute .{attr}")

    def binop(self, op, a, b, m, kind):
        arrays = isinstance(a, np.ndarray) or isinstance(b, np.ndarray)
        if not arrays:
            if not (_is_number(a) and _is_number(b)):
                raise Fallback("arithmetic on something other than numbers")
            return op(a, b)  # Python's own rules; its errors become a Fallback
        if not (_is_number(a) and _is_number(b)):
            raise Fallback("arithmetic on something other than numbers")
        ka, kb = _kind(a), _kind(b)
        if kind in (ast.Div, ast.FloorDiv, ast.Mod):
            zero = np.asarray(b) == 0
            if (np.broadcast_to(zero, m.shape) & m).any():
                raise Fallback("a division by zero")
        if kind is ast.Pow:
            if ka == "f" or kb == "f":  # numpy's power rounds otherwise than Python's: Python's, lane by lane
                return self.math(operator.pow, [a, b], m)
            if (np.broadcast_to(np.asarray(b) < 0, m.shape) & m).any():
                raise Fallback("an integer to a negative power")
        ints = ka in "iub" and kb in "iub"
        if (not ints or kind is ast.Div) and not (_exact(a, m) and _exact(b, m)):
            raise Fallback("an integer past 2**53 met a float")
        if kind in (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift) and (ka == "f" or kb == "f"):
            raise Fallback("a bit operation on a float")
        if ka == "b" and kb == "b" and kind not in (ast.BitAnd, ast.BitOr, ast.BitXor):
            a = np.asarray(a, np.int64)  # True + True is 2 in Python
        if kind is ast.Div and ka in "iub" and kb in "iub":
            a = np.asarray(a, np.float64)
        if kind in (ast.LShift, ast.RShift):
            shift = np.broadcast_to(np.asarray(b), m.shape)
            if ((shift < 0) | (shift > 62))[m].any():
                raise Fallback("a shift the lanes do not model")
        if ints and kind in (ast.Mult, ast.LShift, ast.Pow, ast.Add, ast.Sub):
            # Python's ints never wrap, numpy's int64 do: the result's size, estimated in floats first
            fa, fb = np.asarray(a, np.float64), np.asarray(b, np.float64)
            est = fa * 2.0 ** fb if kind is ast.LShift else _BINOPS[kind](fa, fb)
            if (np.abs(np.broadcast_to(est, m.shape))[m] >= 2.0 ** 61).any():
                raise Fallback("an integer too large for the lanes")
        return op(a, b)

    def compare(self, node, m, frame):
        left = self.expr(node.left, m, frame)
        result = None
        live = m
        for op, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node, live, frame)
            f = _CMPOPS.get(type(op))
            if f is None or not (_is_number(left) and _is_number(right)):
                raise Fallback("a comparison the lanes do not model")
            if (_kind(left) == "f") != (_kind(right) == "f") and not (_exact(left, live) and _exact(right, live)):
                raise Fallback("an integer past 2**53 compared with a float")
            now = f(left, right)
            result = now if result is None else (result & now)
            if len(node.ops) > 1:
                live = live & self.truth(result, live)
                if not live.any():
                    break
            left = right
        return result

    def boolop(self, node, m, frame):
        is_and = isinstance(node.op, ast.And)
        live = m
        value = None
        for sub in node.values:
            v = self.expr(sub, live, frame)
            value = v if value is None else self.merge(value, v, live)
            if not isinstance(value, np.ndarray):
                if not _is_number(value):
                    raise Fallback("and/or of something other than numbers")
                if bool(value) != is_and:
                    return value  # decided in every lane
                live = m
                continue
            t = self.truth(value, m)
            live = m & (t if is_and else ~t)
            if not live.any():
                break
        return value

    def truth(self, v, m):
        if isinstance(v, np.ndarray):
            return v if v.dtype == bool else v != 0
        if _is_number(v):
            return self.all if v else self.none
        raise Fallback("the truth of something other than a number")

    # -- calls -------------------------------------------------------------------------------------
    def call(self, node, m, frame):
        f = self.expr(node.func, m, frame)
        if node.keywords and not (getattr(f, "__self__", None) is self.cuda and len(node.args) == 2
                                  and getattr(f, "__name__", "") in ("_shared_array", "_local_array")
                                  and [kw.arg for kw in node.keywords] == ["alignment"]):
            raise Fallback("a call with keywords")
        if f is range:
            raise Fallback("range() outside a for loop")
        cuda = self.cuda
        owner = getattr(f, "__self__", None)
        if owner is cuda:
            name = f.__name__
            if name == "syncthreads":
                if node.args:
                    raise Fallback("syncthreads() with arguments")
                return self.barrier(m, frame, node.lineno)
            if name in ("threadfence", "threadfence_block", "threadfence_system"):
                return None
            if name in _WARP_OPS:
                return self.warp_op(_WARP_OPS[name], [self.expr(a, m, frame) for a in node.args], m)
            if name == "lanemask_lt":
                return (1 << (self.lin % 32)) - 1
            args = [self.expr(a, m, frame) for a in node.args + [kw.value for kw in node.keywords]]
            if name in ("_shared_array", "_local_array") and len(args) == 3:  # the alignment
                self.alignment(args.pop())
            if name == "grid":
                return self.grid(args, False)
            if name == "gridsize":
                return self.grid(args, True)
            if name == "_shared_array":
                by_block = m.reshape(self.B, self.tpb)
                if (by_block.any(axis=1) & ~by_block.all(axis=1)).any():
                    # thread by thread, the first thread to reach one makes it: their order
                    raise Fallback("a shared array made in a branch")
                la = self.shared_array(node, args)
                k = next(i for i, (_, a) in enumerate(self.allocs) if a is la)
                for b in np.flatnonzero(by_block.any(axis=1)).tolist():  # each block's, in the order it made them
                    if k not in self.block_allocs[b]:
                        self.block_allocs[b].append(k)
                return la
            if name == "_local_array":
                return self.local_array(args, m)
            raise Fallback(f"cuda.{name}")
        if id(f) in self.atomic_names:
            args = [self.expr(a, m, frame) for a in node.args]
            return self.atomic(self.atomic_names[id(f)], args, m, node.lineno)
        args = [self.expr(a, m, frame) for a in node.args]
        if isinstance(f, ScalarType):
            if len(args) != 1:
                raise Fallback("a cast of several values")
            return _cast(f, args[0], m)
        if f in _PY_FUNCS:
            return _PY_FUNCS[f](self, args, m)
        if getattr(f, "__module__", None) == "math" or f in _MATH_FUNCS:
            return self.math(f, args, m)
        tree = function_tree(f) if callable(f) and getattr(f, "__globals__", None) is self.globals else None
        if tree is not None:
            self.call_line = node.lineno
            return self.device_call(f, tree, args, m)
        why = why_not(f) if callable(f) else None
        raise Fallback(f"a call of {getattr(f, '__name__', f)!r}" + (f": {why}" if why else ""))

    def device_call(self, f, tree, args, m):
        if len(tree.args.args) != len(args):
            raise Fallback("a device function called with the wrong number of arguments")
        depth = getattr(self, "_depth", 0)
        if depth > 20:
            raise Fallback("device functions nested too deep")
        self._depth = depth + 1
        line, stmt = self.line, self.stmt
        try:
            inner = Frame(self.n, _code_lines(f), _local_names(tree))
            inner.caller = self.call_line
            if self.follow is not None and self.stmt is not None and _last_line(self.stmt) != self.stmt.lineno:
                # thread by thread its later lines count the statement again after the call returns
                raise Fallback("a device function called in a statement of several lines")
            if self.follow is not None and _lines_shared(tree):
                raise Fallback("each warp's runs of a line that holds two statements")
            if self.lines is not None:
                self.lines.add(f.__code__.co_firstlineno)
            for p, a in zip(tree.args.args, args):
                inner.vars[p.arg] = a
            self.body(tree.body, m, inner)
            ret = inner.ret
            if ret is not None and (m & ~inner.valued).any():
                raise Fallback("a device function that returns a value in some threads only")
            return ret
        finally:
            self._depth = depth
            self.line, self.stmt = line, stmt

    def math(self, f, args, m):
        if not all(_is_number(a) for a in args):
            raise Fallback("a maths function of something other than numbers")
        if not any(isinstance(a, np.ndarray) for a in args):
            return f(*args)
        lanes = np.flatnonzero(m)
        cols = [np.broadcast_to(a, (self.n,))[lanes].tolist() if isinstance(a, np.ndarray) else [a] * len(lanes)
                for a in args]
        values = [f(*xs) for xs in zip(*cols)]
        if values and not all(type(v) in (int, float, bool) for v in values):
            raise Fallback("a maths function with a result the lanes do not hold")
        kinds = {type(v) for v in values}
        out = np.zeros(self.n, dtype=np.float64 if float in kinds or not values else
                       (np.int64 if int in kinds else bool))
        if values:
            out[lanes] = values
        return out

    def grid(self, args, size):
        if len(args) != 1 or type(args[0]) is not int or args[0] not in (1, 2, 3):
            raise Fallback("cuda.grid() of something other than 1, 2 or 3")
        nd = args[0]
        bx, by, bz = self.launch.block
        gx, gy, gz = self.launch.grid
        if size:
            dims = (gx * bx, gy * by, gz * bz)
        else:
            b = self.bidx
            t = self.tidx
            dims = (b[0] * bx + t.x, b[1] * by + t.y, b[2] * bz + t.z)
        return dims[0] if nd == 1 else tuple(dims[:nd])

    def warp_op(self, op, args, m):
        """A warp primitive, as the thread-by-thread run resolves one where every warp's lanes meet
        at it together: each warp's active lanes call it with one mask that names them all, and
        every live lane it names is among them. The result comes from those lanes only."""
        if op == "syncwarp":
            mask = args[0] if args else 0xFFFFFFFF
            value = arg = None
        elif op == "activemask":
            mask, value, arg = 0xFFFFFFFF, None, None
        elif op in ("all", "any", "ballot"):
            mask, value = args
            arg = None
        else:
            mask, value, arg = args
        if type(mask) is not int:
            raise Fallback("a warp mask that differs between lanes")
        mask &= 0xFFFFFFFF
        lane = self.lin % 32
        named = ((mask >> lane) & 1).astype(bool)
        alive = ~self.kernel_frame.dead
        warp = self.blk * ((self.tpb + 31) // 32) + self.lin // 32  # each lane's warp in the group
        if (m & ~named).any():
            raise Fallback("a lane calls a warp primitive with a mask that leaves it out")
        here = np.zeros(int(warp[-1]) + 1, dtype=bool)
        here[warp[m]] = True
        if (here[warp] & named & alive & ~m).any():
            raise Fallback("a warp primitive that not every lane its mask names reaches together")
        self.warped = True
        self.rounds[m] += 1
        if op == "syncwarp":
            self.wphases[m] += 1
            return None
        if op == "activemask":
            bits = np.zeros(len(here), dtype=np.int64)
            np.add.at(bits, warp[alive], 1 << lane[alive])
            return np.where(m, bits[warp], 0)
        if op in ("all", "any", "ballot"):
            truth = self.truth(value, m) & m
            if op == "ballot":
                bits = np.zeros(len(here), dtype=np.int64)
                np.add.at(bits, warp[truth], 1 << lane[truth])
                return np.where(m, bits[warp], 0)
            count = np.bincount(warp[m], minlength=len(here))
            yes = np.bincount(warp[truth], minlength=len(here))
            return np.where(m, ((yes == count) if op == "all" else (yes > 0))[warp].astype(np.int64), 0)
        if not _is_number(value):
            raise Fallback("a shuffle of something other than a number")
        if not (type(arg) is int or (isinstance(arg, np.ndarray) and arg.dtype.kind in "iu")):
            raise Fallback("a shuffle's lane that is not an integer")
        if op == "shfl":
            src = np.broadcast_to(arg, (self.n,)) % 32
            ok = np.ones(self.n, dtype=bool)
        elif op == "shfl_up":
            src = lane - arg
            ok = src >= 0
        elif op == "shfl_down":
            src = lane + arg
            ok = src < 32
        else:
            src = lane ^ np.broadcast_to(arg, (self.n,))
            ok = (src >= 0) & (src < 32)
        source = self.blk * self.tpb + (self.lin // 32) * 32 + np.where(ok, src, 0)
        ok = ok & (source < (self.blk + 1) * self.tpb) & (source >= 0)
        source = np.where(ok, source, 0)
        ok = ok & m[source]
        values = np.broadcast_to(np.asarray(value), (self.n,))
        return np.where(ok, values[source], values)

    def barrier(self, m, frame, line):
        """Each block whose threads all reach it passes it (its own phase); a block some of whose
        threads are elsewhere, or finished, is for the thread-by-thread run to judge."""
        if not m.all():
            by_block = m.reshape(self.B, self.tpb)
            if (by_block.any(axis=1) & ~by_block.all(axis=1)).any():
                raise Fallback("a barrier that not every thread of a block reaches together")
        passing = np.flatnonzero(m.reshape(self.B, self.tpb).any(axis=1)).tolist()
        if self.warped:
            rounds = self.rounds.reshape(self.B, self.tpb)[passing]
            if (rounds != rounds[:, :1]).any():  # thread by thread they arrive, and go on, in another order
                raise Fallback("a barrier reached after different numbers of warp primitives")
        for k in passing:
            self.group_barriers[k].append((int(self.phases[k]), line))
            self.phases[k] += 1
        self.phases_even = bool((self.phases == self.phases[0]).all())
        return None

    def alignment(self, value):
        """A valid alignment changes nothing in a run that keeps values; a wrong one is reported by
        the thread-by-thread run, which raises it where the kernel wrote it."""
        try:
            check_alignment(value, "cuda.shared.array")
        except ValueError:
            raise Fallback("an invalid alignment") from None

    def shared_array(self, node, args):
        """A shared array per block of the group, made where the kernel makes it; its ids are given
        when the group ends (_name_shared), as the thread-by-thread run would give them."""
        if len(args) != 2:
            raise Fallback("cuda.shared.array with other arguments")
        found = self.shared.get(node)
        if found is not None:
            return found
        shape, dtype = args
        if isinstance(shape, np.ndarray) or (isinstance(shape, tuple) and any(isinstance(s, np.ndarray)
                                                                               for s in shape)):
            raise Fallback("a shared array's shape that differs between threads")
        shape = shape_of(shape)
        st = dtype_of(dtype)
        if st.np_dtype.name in ("bool", "uint64"):
            raise Fallback("a shared array of bool or uint64")
        dynamic = shape == (0,)
        if dynamic:
            found = self.shared.get("dynamic")
            if found is not None:
                if found.dtype != st.np_dtype.name:
                    raise Fallback("dynamic shared memory seen as two types")
                self.shared[node] = found
                return found
            shape = (self.launch.shared_bytes // st.np_dtype.itemsize,)
        size = 1
        for n in shape:
            size *= n
        k = len(self.allocs)
        la = LaneArray(np.zeros(size * self.B, dtype=np.int64 if st.is_int else np.float64), shape, None, st.is_int,
                       st.np_dtype.name, SHARED, written=np.zeros(size * self.B, dtype=bool))
        la.block_size = size
        la.aids = PLACEHOLDER + k * self.B + np.arange(self.B, dtype=np.int64)
        self.allocs.append(((shape, st, node.lineno, dynamic), la))
        self.shared[node] = la
        if dynamic:
            self.shared["dynamic"] = la
        return la

    def local_array(self, args, m):
        if len(args) != 2 or not self.launch.fast_local:
            raise Fallback("a local array in a run traced thread by thread")
        shape, dtype = args
        if isinstance(shape, np.ndarray) or (isinstance(shape, tuple) and any(isinstance(s, np.ndarray)
                                                                               for s in shape)):
            raise Fallback("a local array's shape that differs between threads")
        st = dtype_of(dtype)
        return LocalLanes(self.n, shape_of(shape), st.np_dtype.name, st.is_int)

    def local_index(self, arr, idx, m):
        if not isinstance(idx, tuple):
            idx = (idx,)
        if len(idx) != len(arr.shape):
            raise Fallback("a partial index of a local array")
        flat = 0
        for k, n, s in zip(idx, arr.shape, arr.strides):
            if isinstance(k, np.ndarray):
                if k.dtype.kind not in "iu":
                    raise Fallback("an index that is not an integer")
                k = k[m]
                if ((k < 0) | (k >= n)).any():
                    raise Fallback("a local index out of bounds")
            elif type(k) is int:
                if not 0 <= k < n:
                    raise Fallback("a local index out of bounds")
            else:
                raise Fallback("an index that is not an integer")
            flat = flat + k * s
        return np.flatnonzero(m), flat

    def atomic(self, name, args, m, line):
        if len(args) != 3 or not isinstance(args[0], LaneArray):
            raise Fallback("an atomic with other arguments")
        arr, idx, val = args
        flats = self.flat_index(arr, idx, m)
        cells = self.storage(arr, flats, m)
        if arr.written is not None and not arr.written[cells].all():
            raise Fallback("an atomic on unwritten memory")
        update = ATOMIC_UPDATES[name]
        lanes = np.flatnonzero(m)
        vals = np.broadcast_to(val, (self.n,))[lanes].tolist() if isinstance(val, np.ndarray) else [val] * len(lanes)
        data = arr.data
        olds, news = [], []
        for f, v in zip(cells.tolist(), vals):
            old = data[f].item()
            new = arr.coerce(update(old, v), 1)[0]
            data[f] = new
            olds.append(old)
            news.append(new)
        self.record(m, ATOMIC, arr, flats, np.asarray(news, dtype=data.dtype), line)
        out = np.zeros(self.n, dtype=data.dtype)
        out[lanes] = olds
        return out

    # -- memory --------------------------------------------------------------------------------------
    def address(self, node, m, frame, base=None):
        arr = self.expr(node.value, m, frame) if base is None else base
        if isinstance(arr, LocalLanes):
            return arr, self.local_index(arr, self.expr(node.slice, m, frame), m)
        if not isinstance(arr, LaneArray):
            raise Fallback("indexing something other than an array")
        return arr, self.flat_index(arr, self.expr(node.slice, m, frame), m)

    def flat_index(self, arr, idx, m):
        """The active lanes' flat indices; Fallback where one is out of bounds (negative too) or
        not a whole index."""
        if not isinstance(idx, tuple):
            idx = (idx,)
        if len(idx) != len(arr.shape):
            raise Fallback("a partial index (a view)")
        flat = 0
        bad = None
        for k, n, s in zip(idx, arr.shape, arr.strides):
            if isinstance(k, np.ndarray):
                if k.dtype == np.int64:
                    out = k.view(np.uint64) >= n  # a negative index is a huge unsigned one
                elif k.dtype.kind in "iu":
                    out = (k < 0) | (k >= n)
                else:
                    raise Fallback("an index that is not an integer")
                bad = out if bad is None else bad | out
            elif type(k) is int:
                if not 0 <= k < n:
                    raise Fallback("an index out of bounds")
            else:
                raise Fallback("an index that is not an integer")
            flat = flat + k * s  # every lane's (garbage where inactive), then the active ones'
        if bad is not None and (bad & m).any():
            raise Fallback("an index out of bounds")
        if not isinstance(flat, np.ndarray):
            return np.full(len(self.lanes_of(m)), flat, dtype=np.int64)
        return flat[m]

    def read(self, arr, flats, m, line):
        if type(arr) is LocalLanes:
            lanes, flat = flats
            if not arr.written[lanes, flat].all():
                raise Fallback("a local array's cell read before it was written")
            out = np.zeros(self.n, dtype=arr.data.dtype)
            out[lanes] = arr.data[lanes, flat]
            return out
        cells = self.storage(arr, flats, m)
        if arr.written is not None and not arr.written[cells].all():
            raise Fallback("a read of memory nobody wrote")
        values = arr.data[cells]
        self.record(m, READ, arr, flats, values, line)
        out = np.zeros(self.n, dtype=values.dtype)
        out[m] = values
        return out

    def write(self, arr, flats, value, m, line):
        if type(arr) is LocalLanes:
            if not _is_number(value):
                raise Fallback("a store of something other than a number")
            lanes, flat = flats
            arr.data[lanes, flat] = arr.coerce(value, self.n)[lanes]
            arr.written[lanes, flat] = True
            return
        if arr.readonly:
            raise Fallback("a write to read-only memory")
        if not _is_number(value):
            raise Fallback("a store of something other than a number")
        v = arr.coerce(value, self.n)[m]
        cells = self.storage(arr, flats, m)
        if len(cells) > 1:
            ordered = np.sort(cells)
            if (ordered[1:] == ordered[:-1]).any():
                raise Fallback("threads writing one cell at once")
        arr.data[cells] = v
        if arr.written is not None:
            arr.written[cells] = True
        self.record(m, WRITE, arr, flats, v, line)

    def storage(self, arr, flats, m):
        """Where the active lanes' cells are held: a group's shared array holds each block's apart."""
        return flats + self.blk[m] * arr.block_size if arr.block_size else flats


class _Dim:
    """blockIdx, blockDim, gridDim: the same in every lane of a block."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def get(self, attr):
        if attr == "x":
            return self.v[0]
        if attr == "y":
            return self.v[1]
        if attr == "z":
            return self.v[2]
        raise Fallback(f"dim3.{attr}")


def _writes_before(order, cells, writes, n):
    """For each access (by position, of n) that `order` holds, how many writes to its cell came
    before it in `order`: where two orders agree on it for every access, every read sees the same
    write."""
    c, w = cells[order], writes[order].astype(np.int64)
    new = np.ones(len(order), dtype=bool)
    new[1:] = c[1:] != c[:-1]
    before = np.cumsum(w) - w
    starts = np.flatnonzero(new)
    before -= np.repeat(before[starts], np.diff(np.append(starts, len(order))))
    out = np.zeros(n, dtype=np.int64)
    out[order] = before
    return out


def _last_line(st) -> int:
    """The last line of a statement's own text: a compound statement's header, not its body."""
    if isinstance(st, (ast.If, ast.While)):
        return st.test.end_lineno or st.lineno
    if isinstance(st, ast.For):
        return st.iter.end_lineno or st.lineno
    return st.end_lineno or st.lineno


def _lines_shared(tree) -> bool:
    """Whether two statements of the function (a header and its body, `a; b`) share a line."""
    found = _SHARED_LINES.get(tree)
    if found is None:
        found = _SHARED_LINES[tree] = _share_lines(tree)
    return found


_SHARED_LINES: dict = {}


def _share_lines(tree) -> bool:
    seen: set = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node is not tree:
            lines = set(range(node.lineno, _last_line(node) + 1))
            if lines & seen:
                return True
            seen |= lines
    return False


def _local_names(tree) -> frozenset:
    found = _LOCALS.get(tree)
    if found is None:
        names = {a.arg for a in tree.args.args}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
        found = _LOCALS[tree] = frozenset(names)
    return found


_LOCALS: dict = {}


def _code_lines(fn) -> frozenset:
    found = _CODE_LINES.get(fn.__code__)
    if found is None:
        found = _CODE_LINES[fn.__code__] = frozenset(line for _, _, line in fn.__code__.co_lines() if line)
    return found


_CODE_LINES: dict = {}


def _lines_of(st, code_lines) -> list:
    """The lines a statement's run reports to a line tracer: those of it that hold instructions
    (a compound statement's header only)."""
    found = _STATEMENT_LINES.get(st)
    if found is None:
        body = getattr(st, "body", None)
        last = body[0].lineno - 1 if isinstance(body, list) and body else (st.end_lineno or st.lineno)
        found = _STATEMENT_LINES[st] = [line for line in range(st.lineno, max(st.lineno, last) + 1)
                                        if line in code_lines]
    return found


_STATEMENT_LINES: dict = {}


def _exact(v, m) -> bool:
    """Whether an integer value is exact as a float64 in the lanes of m (|v| < 2**53), as
    numpy's mixed arithmetic needs to agree with Python's exact ints."""
    if isinstance(v, np.ndarray):
        if v.dtype.kind not in "iu":
            return True
        w = v[m]
        return not ((w >= 2 ** 53) | (w <= -2 ** 53)).any()
    return type(v) is not int or -2 ** 53 < v < 2 ** 53


def _is_number(v) -> bool:
    return type(v) in (int, float, bool) or (isinstance(v, np.ndarray) and v.dtype.kind in "fiub")


def _is_bool(v) -> bool:
    return type(v) is bool or (isinstance(v, np.ndarray) and v.dtype == bool)


def _kind(v) -> str:
    if isinstance(v, np.ndarray):
        return v.dtype.kind
    return "b" if type(v) is bool else "i" if type(v) is int else "f"


def _cast(st: ScalarType, v, m):
    name = st.np_dtype.name
    if not isinstance(v, np.ndarray):
        if not _is_number(v):
            raise Fallback("a cast of something other than a number")
        return st(v)
    if name in ("float32", "float64") and not _exact(v, m):
        raise Fallback("a float cast of an integer past 2**53")
    if name == "float32":
        return v.astype(np.float32).astype(np.float64)
    if name == "float64":
        return v.astype(np.float64)
    if name == "bool":
        return v != 0
    if v.dtype.kind == "f":
        vals = v[m]
        if not np.isfinite(vals).all():
            raise Fallback("an int() of a value that is not finite")
        v = np.trunc(v)
        if (np.abs(vals) >= 2.0 ** 62).any():
            raise Fallback("a cast of a huge value")
    v = np.where(m, v, 0).astype(np.int64)
    bits = st.np_dtype.itemsize * 8
    if bits == 64:
        if st.np_dtype.kind == "u" and (v[m] < 0).any():
            raise Fallback("a uint64 of a negative value")
        return v
    span = 1 << bits
    v = v & (span - 1)
    if st.np_dtype.kind == "i":
        v = np.where(v >= span // 2, v - span, v)
    return v


def _py_int(self, args, m):
    if len(args) != 1:
        raise Fallback("int() of several values")
    v = args[0]
    if not isinstance(v, np.ndarray):
        return int(v)
    if v.dtype.kind == "f":
        vals = v[m]
        if not np.isfinite(vals).all() or (np.abs(vals) >= 2.0 ** 62).any():
            raise Fallback("int() of a value the lanes do not hold")
        return np.where(m, np.trunc(v), 0).astype(np.int64)
    return v.astype(np.int64)


def _py_float(self, args, m):
    if len(args) != 1:
        raise Fallback("float() of several values")
    v = args[0]
    if not _exact(v, m):
        raise Fallback("float() of an integer past 2**53")
    return float(v) if not isinstance(v, np.ndarray) else v.astype(np.float64)


def _py_abs(self, args, m):
    if len(args) != 1:
        raise Fallback("abs() of several values")
    v = args[0]
    if _is_bool(v):
        return abs(v) if not isinstance(v, np.ndarray) else v.astype(np.int64)
    if isinstance(v, np.ndarray) and v.dtype.kind == "i" and (v[m] == np.iinfo(np.int64).min).any():
        raise Fallback("abs() of the smallest int64")  # numpy's wraps; Python's ints do not
    return abs(v)


def _py_minmax(pick_new):
    def fold(self, args, m):
        if len(args) == 1:
            raise Fallback("min()/max() of a sequence")
        if len(args) < 2 or not all(_is_number(a) for a in args):
            raise Fallback("min()/max() of something other than numbers")
        best = args[0]
        for v in args[1:]:
            if not isinstance(best, np.ndarray) and not isinstance(v, np.ndarray):
                best = v if pick_new(v, best) else best
            else:
                best = np.where(pick_new(v, best), v, best)
        return best

    return fold


def _py_len(self, args, m):
    if len(args) != 1 or not isinstance(args[0], (LaneArray, tuple)):
        raise Fallback("len() of something other than an array")
    a = args[0]
    return a.shape[0] if isinstance(a, LaneArray) else len(a)


_PY_FUNCS = {int: _py_int, float: _py_float, abs: _py_abs, len: _py_len,
             min: _py_minmax(operator.lt), max: _py_minmax(operator.gt)}
_MATH = {"sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sinh", "cosh",
         "asin", "acos", "atan", "atan2", "floor", "ceil", "fabs", "pow", "erf", "erfc", "hypot", "isnan",
         "isinf", "isfinite", "trunc", "copysign", "fmod", "gamma", "lgamma", "exp2", "cbrt"}
_MATH_FUNCS = {getattr(math, n) for n in _MATH if hasattr(math, n)}
_SCALAR_NAMES = {name for name, st in SCALARS.items() if st is not None} | {"types"}  # numba.float32, ...
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
           ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift}
_CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
           ast.Eq: operator.eq, ast.NotEq: operator.ne}
