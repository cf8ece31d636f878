"""The lockstep CPU simulator: blocks of threads run as greenlets, barrier phase by barrier phase.

Each block runs on its own. Every thread of the block runs until it reaches a barrier, a warp
primitive or its end; when every thread of the block waits at the same barrier, the phase ends and
they all go on. A barrier that only some threads of the block reach is barrier divergence: on a GPU
that hangs or corrupts results, so the block stops there and the verdict says which threads went
where. Warp primitives resolve mask by mask: the lanes that called with one mask go on once every
live lane that mask names has arrived, with a result from their own values (two half-warps may each
vote with their own mask).

Greenlets are pooled and reused across threads and launches (a fresh greenlet costs several
microseconds, a reused one a fraction of one), and the `cuda` stand-in's thread attributes are
rewritten at each switch, so a simulated thread that never waits costs two greenlet switches.
"""

from __future__ import annotations

import gc
import re
import signal
import sys
import threading
import time
from collections import deque
from contextlib import contextmanager

import numpy as np
from greenlet import GreenletExit, getcurrent, greenlet

from .devicearray import memory_of
from .fakecuda import Dim3, FakeCuda, ScalarType, Unsupported
from .hostapi import MAX_BLOCK, check_launchable, launch_config
from .index_words import not_an_array
from .simarray import KernelTimeout, NeedsCheckedRun, SimArray, fast_local, new_array, shape_of
from ..trace import CONST, GLOBAL, LOCAL, SHARED, ArrayInfo, BarrierRecord, Trace, fmt_dim

_DONE = object()
_DYNAMIC = "dynamic shared memory"  # the key of a block's dynamic shared array among its shared arrays


class StopLaunch(Exception):
    """Ends a launch early after a failure that makes going on pointless (a Python error, a timeout)."""


class SimKernel:
    """What `@cuda.jit` returns in the simulator: launchable as kernel[blocks, threads](...)."""

    def __init__(self, fn, cuda: FakeCuda):
        self.py_func = fn
        self.cuda = cuda
        self.__name__ = getattr(fn, "__name__", "kernel")
        code = getattr(fn, "__code__", None)
        # a launch names its arrays as the kernel's parameters do; a *rest takes positions
        self.params = list(code.co_varnames[:code.co_argcount]) if code is not None else []

    def __getitem__(self, config):
        # kernel[blocks, threads], kernel[blocks, threads, stream] or kernel[blocks, threads, stream,
        # shared_bytes], checked as numba-cuda checks them (hostapi.py): the simulator has one
        # stream, so the stream changes nothing here
        blocks, threads, shared_bytes = launch_config(config)

        def launcher(*handles):
            cuda = self.cuda
            # host code holds DeviceArray handles (devicearray.py); the kernel gets the memory, and
            # the trace keeps where each array came from (by aid: the arrays are numbered in order)
            check_launchable(blocks, threads, shared_bytes)  # what the driver refuses when a GPU launches it
            args = [memory_of(a) for a in handles]
            roles = [getattr(h, "role", None) for h, a in zip(handles, args) if isinstance(a, np.ndarray)]
            cuda._launches.append((self.__name__, launch_types(args)))
            cuda._plans.append((self.__name__, blocks, threads, shared_bytes, tuple(
                ("array", id(a)) if isinstance(a, np.ndarray) else ("value", type(a).__name__, a) for a in args)))
            if cuda._record_only:
                return None
            names = self.params[:len(args)] + [f"arg{i}" for i in range(len(self.params), len(args))]
            # a GPU accepts a float size (seen on an H100); the simulator takes its whole part
            whole = int(shared_bytes) if isinstance(shared_bytes, float) else shared_bytes
            launch = run_launch(self, blocks, threads, list(zip(names, args)), shared_bytes=whole,
                                sample=cuda._sample)
            launch.trace.roles = roles
            cuda._traces.append((launch.trace, launch.failures))
            cuda._ran_blocks.append((launch.ran_blocks, launch.blocks_total))
            return None

        return launcher

    def __call__(self, *args, **kwargs):
        raise ValueError("Kernel launch configuration was not specified: a kernel is launched with "
                         "kernel[blocks, threads](...), not called directly")


def run_launch(kernel: SimKernel, blocks, threads, named_args, *, current=None, **options) -> "Launch":
    """Make and run one Launch; a launch with FastLocal arrays that needs the checked ones is run
    again with them, from the same arguments (a launch writes its arrays back only when it
    finishes). `current`, a list, holds the launch running now, for a watchdog."""
    launch = Launch(kernel, blocks, threads, named_args, **options)
    if current is not None:
        current[:] = [launch]
    try:
        launch.run()
    except NeedsCheckedRun:
        launch = Launch(kernel, blocks, threads, named_args, **{**options, "fast_local": False})
        if current is not None:
            current[:] = [launch]
        launch.run()
    return launch


class records:
    """What a module's host code launched, while the block lasts: `.launches` (kernel name and
    argument types), `.plans` (kernel name, grid, block, shared bytes, and each argument: an array by
    its id, anything else by its type and value) and `.traces` ((trace, failures) per launch). `record_only=True` notes the
    launches without running any kernel. `trace_local=False` keeps local arrays' reads and writes
    out of the traces (their faults stay in): for runs that no one inspects thread by thread."""

    def __init__(self, cuda: FakeCuda, record_only: bool = False, trace_local: bool = True, sample=None):
        """`sample`: a launch's blocks to run, a Sample, or None for all (see Launch)."""
        self.cuda, self.record_only, self.trace_local, self.sample = cuda, record_only, trace_local, sample
        self.launches: list = []
        self.plans: list = []
        self.traces: list = []
        self.ran_blocks: list = []  # per launch: (the blocks that ran, or None for all; how many it has)

    def __enter__(self):
        cuda = self.cuda
        cuda._launches, cuda._traces, cuda._record_only = self.launches, self.traces, self.record_only
        cuda._plans = self.plans
        cuda._trace_local, cuda._sample, cuda._ran_blocks = self.trace_local, self.sample, self.ran_blocks
        return self

    def __exit__(self, *exc):
        cuda = self.cuda
        cuda._launches, cuda._traces, cuda._record_only, cuda._plans = [], [], False, []
        cuda._trace_local, cuda._sample, cuda._ran_blocks = True, None, []


class Sample:
    """Which blocks of a launch run, for a verification at a large shape where every block's
    trace would take minutes: the first and the last block (the edges a ragged size makes), then
    the others in an order drawn from `seed`, until `seconds` have passed; or exactly `blocks`
    (positions), to run a second start of `out` on the same blocks. Only sound for blocks that are
    independent (one launch, no global atomics): task_child checks that, and runs every block
    when it does not hold."""

    def __init__(self, seed: int = 0, seconds: float | None = 4.0, blocks: list | None = None, least: int = 2):
        """`blocks` in the order they are to run (None: the first, the last, then drawn from
        `seed`); `seconds` None: every one of them; `least`: how many run whatever the time."""
        self.seed, self.seconds, self.blocks, self.least = seed, seconds, blocks, least

    def order(self, grid) -> list:
        gx, gy, gz = grid
        every = [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]
        if self.blocks is not None:
            inside = set(every)
            return [tuple(b) for b in self.blocks if tuple(b) in inside]
        ends = [every[-1], every[0]] if self.least < 2 else [every[0], every[-1]]  # one block: the last, ragged one
        if len(every) <= 2:
            return list(dict.fromkeys(ends))
        rest = every[1:-1]
        picks = np.random.default_rng(self.seed).permutation(len(rest))
        return ends + [rest[i] for i in picks]


def _scalars_and_constants(kernel, named_args) -> tuple[dict, dict]:
    """The launch's integer arguments, named as the kernel's parameters are, and its module's
    integer constants (a few dozen at most): what advice may name as the bound of an index."""
    params = getattr(kernel, "params", [])
    scalars = {}
    for n, (name, value) in enumerate(named_args):
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            scalars[params[n] if n < len(params) else name] = int(value)
    constants = {}
    namespace = getattr(getattr(kernel, "py_func", None), "__globals__", {}) or {}
    for name, value in list(namespace.items()):
        if type(value) is int and not name.startswith("_"):
            constants[name] = value
            if len(constants) >= 32:
                break
    return scalars, constants


def launch_types(args) -> tuple:
    """Each argument as the real compiler would type it: ('array', dtype, ndim) for a C-contiguous
    array, ('array', dtype, ndim, 'F' or 'A') for another layout (a column slice is 'A': a kernel
    declared for C arrays has no match for it), ('int',), ('float',), ('bool',), and ('tuple',
    (each item's type, ...)) for a tuple (a shape passed whole)."""
    out = []
    for a in args:
        if hasattr(a, "dtype") and hasattr(a, "ndim") and a.ndim > 0:
            flags = getattr(a, "flags", None)
            layout = "C" if flags is None or flags.c_contiguous else "F" if flags.f_contiguous else "A"
            out.append(("array", str(a.dtype), int(a.ndim)) + (() if layout == "C" else (layout,)))
        elif isinstance(a, tuple):
            out.append(("tuple", launch_types(a)))
        elif isinstance(a, bool):
            out.append(("bool",))
        elif isinstance(a, (int,)) or (hasattr(a, "dtype") and a.dtype.kind in "iu"):
            out.append(("int",))
        else:
            out.append(("float",))
    return tuple(out)


class ThreadCtx:
    __slots__ = ("tid", "idx", "lin", "lane", "warp", "wphase", "worker", "req", "resume", "done")

    def __init__(self, tid, idx, lin):
        self.tid = tid
        self.idx = idx
        self.lin = lin
        self.lane = lin % 32
        self.warp = lin // 32
        self.wphase = 0
        self.worker = None
        self.req = None
        self.resume = None
        self.done = False


class Launch:
    """One kernel launch on the simulator: arrays wrapped, blocks run, everything traced."""

    def __init__(self, kernel: SimKernel, blocks, threads, named_args, *, source_lines=None,
                 filename=None, max_events=5_000_000, shared_bytes=0, fast_local=None, sample=None):
        self.kernel = kernel
        self.sample = sample
        self.ran_blocks: list | None = None  # with a sample: the blocks that ran (None: every one)
        self.cuda = kernel.cuda
        self.grid = _dim3(blocks, "blocks")
        self.block = _dim3(threads, "threads")
        # report positions with as many dimensions as the launch was written with: (3,) or (1, 0)
        self.grid_nd = 1 if isinstance(blocks, (int, np.integer)) else len(tuple(blocks))
        self.block_nd = 1 if isinstance(threads, (int, np.integer)) else len(tuple(threads))
        if self.block[0] * self.block[1] * self.block[2] > 1024:
            raise ValueError(f"a block may hold at most 1024 threads, got {fmt_dim(self.block)}")
        if any(n > most for n, most in zip(self.block, MAX_BLOCK)):
            raise ValueError(f"a block may hold at most {MAX_BLOCK} threads along x, y and z, got {fmt_dim(self.block)}")
        if not isinstance(shared_bytes, (int, np.integer)) or isinstance(shared_bytes, bool) or shared_bytes < 0:
            raise ValueError(f"the dynamic shared memory of a launch is a whole number of bytes, got {shared_bytes!r}")
        # every cuda.shared.array(0, dtype) of a block is a view of one buffer of this many bytes
        self.shared_bytes = int(shared_bytes)
        self.trace = Trace(self.grid, self.block, grid_nd=self.grid_nd, block_nd=self.block_nd)
        self.events = self.trace.events
        self.failures: list[dict] = []
        self.source_lines = source_lines or kernel.cuda._source_lines
        self.filename = filename or getattr(kernel.py_func.__code__, "co_filename", "")
        self.max_events = max_events
        # Local arrays traced access by access, for the thread pane; a run judged by detectors
        # alone (records(trace_local=False)) keeps only their faults, several times faster.
        self.trace_local = kernel.cuda._trace_local
        # Untraced, float local arrays can also be FastLocal dicts; such a launch starts over
        # with checked ones (NeedsCheckedRun) when anything about them needs judging.
        self.fast_local = not self.trace_local if fast_local is None else fast_local
        self.needs_checked_run = False
        self._fast_locals: list = []  # this block's FastLocal arrays, checked when it ends
        # the state every traced access reads
        self.tid = 0
        self.phase = 0
        self.wphase = 0
        self._outputs = []  # (numpy array, SimArray) to copy back
        self.arg_types = launch_types([value for _, value in named_args])
        self.args = [self._wrap_arg(name, value) for name, value in named_args]
        self.trace.scalars, self.trace.constants = _scalars_and_constants(kernel, named_args)
        self.oob_places: set = set()  # (array, code, instruction) whose access text is noted (simarray)
        self._shared = {}
        self._const = {}
        self._cur = None
        self.running = False  # only while blocks run may the watchdog interrupt

    # -- arguments ------------------------------------------------------------------------------
    def _wrap_arg(self, name, value):
        if isinstance(value, np.ndarray):
            data = value.ravel().tolist()
            shape = value.shape
            aid = len(self.trace.arrays)
            dtype = _dtype_name(value.dtype)
            self.trace.arrays.append(ArrayInfo(aid, name, GLOBAL, tuple(shape), dtype, initial=list(data)))
            arr = new_array(data, shape, aid, self, value.dtype.kind in "iub", False, dtype)
            self._outputs.append((value, arr))
            return arr
        if isinstance(value, (np.integer, bool)):
            return int(value)
        if isinstance(value, np.floating):
            return float(value)
        return value

    # -- running --------------------------------------------------------------------------------
    def run(self) -> Trace:
        cuda = self.cuda
        # before the blocks run (and the watchdog's clock for them): the intrinsics' types
        cuda._call_types = cuda.typed_calls(self.kernel.__name__, self.arg_types)
        previous = cuda.launch
        cuda.launch = self
        cuda.blockDim = Dim3(*self.block)
        cuda.gridDim = Dim3(*self.grid)
        self._main = getcurrent()
        self._pool = _pool_for(self._main)
        bx, by, bz = self.block
        self._layout = []
        for z in range(bz):
            for y in range(by):
                for x in range(bx):
                    self._layout.append(Dim3(x, y, z))
        # The trace is a list of many small tuples: the cyclic garbage collector would rescan it
        # again and again while it grows, for nothing (a launch makes no cycles worth collecting).
        gc_was_enabled = gc.isenabled()
        gc.disable()
        self.running = True
        kept = True
        try:
            if self._ran_as_lanes():
                pass
            elif self.sample is None:
                gx, gy, gz = self.grid
                for z in range(gz):
                    for y in range(gy):
                        for x in range(gx):
                            self._run_block((x, y, z))
                            if self.fast_local:
                                self._check_fast_locals()
            else:
                self._run_sample()
            if self.fast_local and self.trace.uninit_used is not None:
                # an unwritten read happened: whether, and where, its value was used (a store into
                # a FastLocal is a use the dict does not see) is for the checked run to say
                raise NeedsCheckedRun("memory nobody wrote was read")
        except StopLaunch:
            pass
        except KernelTimeout as e:  # fired while the scheduler itself was running
            self._fail_timeout(e, None, None)
        except NeedsCheckedRun:
            kept = False
            raise
        finally:
            self.running = False
            if gc_was_enabled:
                gc.enable()
            cuda.launch = previous
            if kept:
                for array, sim in self._outputs:
                    array[...] = _host_values(sim.data, array.dtype).reshape(array.shape)
        return self.trace

    def _ran_as_lanes(self) -> bool:
        """Whether the block's threads ran together as lanes (lanes.py); where they cannot, the
        launch runs thread by thread from its untouched inputs, and `lanes_fallback` says why."""
        from . import lanes

        self.lanes_fallback = None
        if not lanes.ENABLED or not lanes.worth_it(self.block[0] * self.block[1] * self.block[2], self.blocks_total):
            self.lanes_fallback = "off" if not lanes.ENABLED else "few threads"
            return False
        try:
            lanes.run_lanes(self)
        except lanes.Fallback as e:
            self.lanes_fallback = str(e) or "fallback"
            lanes.TALLY[self.lanes_fallback] += 1
            return False
        lanes.TALLY["lanes"] += 1
        return True

    @property
    def blocks_total(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    def _run_sample(self):
        order = self.sample.order(self.grid)
        until = None if self.sample.seconds is None else time.monotonic() + self.sample.seconds
        self.ran_blocks = []
        for n, bpos in enumerate(order):
            if until is not None and n >= self.sample.least and time.monotonic() > until:
                break
            self._run_block(bpos)
            self.ran_blocks.append(bpos)
            if self.fast_local:
                self._check_fast_locals()
        if len(self.ran_blocks) == self.blocks_total:
            self.ran_blocks = None  # every block ran: nothing was sampled

    def _check_fast_locals(self):
        if self._fast_run_in_doubt():
            raise NeedsCheckedRun("a local array needs the checked run")
        self._fast_locals.clear()

    def _fast_run_in_doubt(self) -> bool:
        return (self.needs_checked_run or self.trace.uninit_used is not None
                or any(a.faulty() for a in self._fast_locals))

    def _run_block(self, bpos):
        cuda = self.cuda
        cuda.blockIdx = Dim3(*bpos)
        self.phase = 0
        self._shared = {}
        self.block_pos = bpos
        gx, gy, _ = self.grid
        blin = bpos[0] + bpos[1] * gx + bpos[2] * gx * gy
        nthreads = len(self._layout)
        base = blin * nthreads
        threads = [ThreadCtx(base + i, idx, i) for i, idx in enumerate(self._layout)]
        runnable = deque(threads)
        at_bar: list[ThreadCtx] = []
        at_warp: list[ThreadCtx] = []
        fn, args = self.kernel.py_func, self.args
        while True:
            while runnable:
                t = runnable.popleft()
                cuda.threadIdx = t.idx
                cuda.laneid = t.lane
                self.tid = t.tid
                self.wphase = t.wphase
                self._cur = t
                if t.worker is None:
                    t.worker = self._pool.pop() if self._pool else greenlet(_worker_loop, parent=self._main)
                    req = t.worker.switch((fn, args))
                else:
                    req = t.worker.switch(t.resume)
                if req is _DONE:
                    t.done = True
                    self._pool.append(t.worker)
                    t.worker = None
                elif req[0] == "bar":
                    t.req = req
                    at_bar.append(t)
                elif req[0] == "warp":
                    t.req = req
                    at_warp.append(t)
                else:
                    self._thread_error(t, req[1], threads)
            if at_warp:
                resolved = self._resolve_warps(threads, at_warp)
                if resolved:
                    at_warp = [t for t in at_warp if t not in resolved]
                    runnable.extend(sorted(resolved, key=lambda t: t.lin))
                    continue
                self._warp_deadlock(threads, at_warp, at_bar)
                return
            if not at_bar:
                return
            if not self._barrier_agrees(threads, at_bar):
                return
            self._release_barrier(at_bar)
            runnable.extend(at_bar)
            at_bar = []

    # -- barriers -------------------------------------------------------------------------------
    def barrier(self, kind, pred, frame):
        """Called from a simulated thread: wait until the whole block arrives."""
        return self._main.switch(("bar", kind, pred, frame.f_lineno, frame.f_code))

    def _barrier_agrees(self, threads, at_bar) -> bool:
        if len(at_bar) == len(threads):
            _, kind, _, line, code = at_bar[0].req
            for t in at_bar:
                r = t.req
                if r[3] != line or r[4] is not code or r[1] != kind:
                    break
            else:
                return True
        sites = {}
        for t in at_bar:
            sites.setdefault((t.req[4], t.req[3], t.req[1]), []).append(t)
        finished = [t for t in threads if t.done]
        if len(sites) == 1 and not finished:
            return True
        # Divergence: describe who is where, most populous barrier first.
        groups = sorted(sites.values(), key=len, reverse=True)
        main_group = groups[0]
        line = main_group[0].req[3]
        where = []
        for g in groups[1:]:
            where.append(f"{_count(g, 'thread')} waited at the barrier on line {g[0].req[3]} instead")
        if finished:
            where.append(f"{_count(finished, 'thread')} had already finished without reaching it")
        waiting = _thread_list(self, main_group)
        others = (groups[1] if len(groups) > 1 else finished)
        block = self.block_pos[:self.grid_nd]
        self.failures.append({
            "kind": "barrier_divergence",
            "message": (f"The barrier on line {line} was reached by {len(main_group)} of {len(threads)} "
                        f"threads of block {fmt_dim(block)} ({waiting}); "
                        + "; ".join(where)
                        + ". Every thread of a block must reach every barrier: move the barrier out of "
                          "the branch or the early return, so all threads call it."),
            "block": block,
            "thread": _tdim(self, main_group[0]),
            "other_thread": _tdim(self, others[0]),
            "line": line,
            "threads_at_barrier": [t.tid for t in main_group],
        })
        self._abandon(threads, f"stopped at the diverged barrier on line {line}")
        return False

    def _release_barrier(self, at_bar):
        kind = at_bar[0].req[1]
        result = None
        if kind == "syncthreads_count":
            result = sum(1 for t in at_bar if t.req[2])
        elif kind == "syncthreads_and":
            result = int(all(t.req[2] for t in at_bar))
        elif kind == "syncthreads_or":
            result = int(any(t.req[2] for t in at_bar))
        self.trace.barriers.append(BarrierRecord(self.block_pos[:self.grid_nd], self.phase,
                                                 at_bar[0].req[3], kind))
        self.phase += 1
        for t in at_bar:
            t.resume = result
            t.req = None

    # -- warps ----------------------------------------------------------------------------------
    def warp_op(self, op, mask, value, arg, line):
        return self._main.switch(("warp", op, mask, value, arg, line))

    def active_mask(self):
        return self._main.switch(("warp", "activemask", 0xFFFFFFFF, None, None, _caller_line()))

    def _resolve_warps(self, threads, at_warp):
        """Resolve each lane group that waits at a warp primitive: the lanes that called it with one
        mask. A group is ready once every live lane its mask names has arrived; its result comes from
        its own lanes only. Lanes of one mask at different calls, or a named lane that called with
        another mask, is divergence."""
        by_warp = {}
        for t in at_warp:
            by_warp.setdefault(t.warp, []).append(t)
        resolved = []
        for w, waiting in by_warp.items():
            live = [t for t in threads if t.warp == w and not t.done]
            arrived = {t.lane: t for t in waiting}
            groups = {}
            for t in waiting:
                groups.setdefault(int(t.req[2]) & 0xFFFFFFFF, []).append(t)
            for mask, group in groups.items():
                named = [t for t in live if (mask >> t.lane) & 1]
                if any(t.lane not in arrived for t in named):
                    continue  # a participating lane has not arrived yet (it is at a block barrier)
                ops = {(t.req[1], t.req[5]) for t in group}
                if len(ops) > 1:
                    desc = ", ".join(f"{op} on line {ln}" for op, ln in sorted(ops, key=lambda o: o[1]))
                    self._warp_divergence(threads, group[0], (
                        f"Lanes of warp {w} in block {fmt_dim(self.block_pos[:self.grid_nd])} reached different "
                        f"warp primitives at once ({desc}). A *_sync primitive must be reached by every lane "
                        "its mask names, at the same call."))
                stranger = next((arrived[t.lane] for t in named if int(arrived[t.lane].req[2]) & 0xFFFFFFFF != mask),
                                None)
                if stranger is not None:
                    first = group[0]
                    self._warp_divergence(threads, first, (
                        f"Lane {first.lane} of warp {w} in block {fmt_dim(self.block_pos[:self.grid_nd])} calls "
                        f"{first.req[1]} on line {first.req[5]} with mask {mask:#010x}, but lane {stranger.lane}, "
                        f"which that mask names, calls {stranger.req[1]} on line {stranger.req[5]} with mask "
                        f"{int(stranger.req[2]) & 0xFFFFFFFF:#010x}. Every lane a mask names must make the same "
                        "call with the same mask."))
                resolved += self._resolve_group(group, live)
        return resolved

    def _resolve_group(self, group, live):
        op = group[0].req[1]
        values = {t.lane: t.req[3] for t in group}
        live_mask = 0
        for t in live:
            live_mask |= 1 << t.lane
        for t in group:
            _, _, m, value, arg, _ = t.req
            if op == "syncwarp":
                t.wphase += 1
                res = None
            elif op == "shfl":
                res = values.get(int(arg) % 32, value)
            elif op == "shfl_up":
                src = t.lane - int(arg)
                res = values.get(src, value) if src >= 0 else value
            elif op == "shfl_down":
                src = t.lane + int(arg)
                res = values.get(src, value) if src < 32 else value
            elif op == "shfl_xor":
                res = values.get(t.lane ^ int(arg), value)
            elif op == "all":
                res = int(all(v for v in values.values()))
            elif op == "any":
                res = int(any(v for v in values.values()))
            elif op == "ballot":
                res = sum(1 << lane for lane, v in values.items() if v)
            elif op == "activemask":
                res = live_mask
            else:  # pragma: no cover - every op above is produced by FakeCuda
                raise Unsupported(op)
            t.resume = res
            t.req = None
        return group

    def _warp_divergence(self, threads, t, message):
        block = self.block_pos[:self.grid_nd]
        self.failures.append({"kind": "barrier_divergence", "message": message, "block": block,
                              "thread": _tdim(self, t), "line": t.req[5]})
        self._abandon(threads, "stopped at a diverged warp primitive")
        raise StopLaunch

    def _warp_deadlock(self, threads, at_warp, at_bar):
        t = at_warp[0]
        block = self.block_pos[:self.grid_nd]
        other = at_bar[0] if at_bar else None
        msg = (f"Lane {t.lane} of warp {t.warp} in block {fmt_dim(block)} waits at a warp primitive on line "
               f"{t.req[5]} for lanes that never arrive")
        if other is not None:
            msg += f" (they wait at the barrier on line {other.req[3]})"
        msg += ". Every lane the mask names must reach the same primitive."
        self.failures.append({"kind": "barrier_divergence", "message": msg, "block": block,
                              "thread": _tdim(self, t), "other_thread": _tdim(self, other) if other else None,
                              "line": t.req[5]})
        self._abandon(threads, "stopped at a diverged warp primitive")

    # -- memory ---------------------------------------------------------------------------------
    def shared_array(self, shape, dtype: ScalarType, frame):
        key = (frame.f_code, frame.f_lasti)
        arr = self._shared.get(key)
        if arr is None:
            shape = shape_of(shape)
            line = frame.f_lineno
            if shape == (0,):
                arr = self._dynamic_shared(dtype, line)
            else:
                arr = self._new_array(shape, dtype, SHARED, line, block=self.block_pos[:self.grid_nd])
            self._shared[key] = arr
        return arr

    def _dynamic_shared(self, dtype: ScalarType, line):
        """cuda.shared.array(0, dtype): the block's dynamic shared memory, shared_bytes // itemsize
        elements. In CUDA every such array starts at one base address, so here they are all one
        array (one storage, one trace id): a write through one is a write through the others."""
        arr = self._shared.get(_DYNAMIC)
        if arr is None:
            size = self.shared_bytes // dtype.np_dtype.itemsize
            arr = self._new_array((size,), dtype, SHARED, line, block=self.block_pos[:self.grid_nd])
            self._shared[_DYNAMIC] = arr
        elif arr.dtype != dtype.np_dtype.name:
            # the same bytes seen as two types: the simulator keeps values, not bytes
            raise Unsupported(f"dynamic shared memory used as both {arr.dtype} and {dtype.np_dtype.name}")
        return arr

    def local_array(self, shape, dtype: ScalarType, frame):
        t = self._cur
        if self.fast_local:
            a = fast_local(shape_of(shape), dtype.np_dtype.name, self, dtype.is_int)
            self._fast_locals.append(a)
            return a
        return self._new_array(shape_of(shape), dtype, LOCAL, frame.f_lineno, thread=_tdim(self, t),
                               block=self.block_pos[:self.grid_nd], quiet=not self.trace_local)

    def const_array(self, ary, frame=None):
        if isinstance(ary, SimArray):
            return ary
        key = id(ary)
        arr = self._const.get(key)
        if arr is None:
            ary = np.asarray(ary)
            data = ary.ravel().tolist()
            aid = len(self.trace.arrays)
            name = (_assigned_name(self.source_lines, frame.f_lineno) if frame is not None else None) or "const"
            self.trace.arrays.append(ArrayInfo(aid, name, CONST, tuple(ary.shape), ary.dtype.name,
                                               initial=list(data)))
            arr = new_array(data, ary.shape, aid, self, ary.dtype.kind in "iub", False, ary.dtype.name,
                            readonly=True)
            self._const[key] = arr
        return arr

    def _new_array(self, shape, dtype, space, line, block=None, thread=None, quiet=False):
        size = 1
        for s in shape:
            size *= s
        aid = len(self.trace.arrays)
        name = _assigned_name(self.source_lines, line) or f"{space}@{line}"
        self.trace.arrays.append(ArrayInfo(aid, name, space, shape, dtype.np_dtype.name, block=block,
                                           thread=thread, line=line))
        return new_array([None] * size, shape, aid, self, dtype.is_int, True, dtype.np_dtype.name,
                         quiet=quiet)

    # -- failures -------------------------------------------------------------------------------
    def _thread_error(self, t, exc, threads):
        if self.fast_local and (not isinstance(exc, KernelTimeout) or self._fast_run_in_doubt()):
            # the checked run words every error (and says whether a FastLocal caused it)
            self._abandon(threads, "run again with checked local arrays")
            raise NeedsCheckedRun("a thread stopped with an error")
        tb = exc.__traceback__
        line = _learner_line(tb, self.filename)
        block = self.block_pos[:self.grid_nd]
        where = f"thread {fmt_dim(_tdim(self, t))} of block {fmt_dim(block)}"
        if isinstance(exc, KernelTimeout):
            self._fail_timeout(exc, t, line)
        elif isinstance(exc, Unsupported) and exc.near and exc.near.lower() == exc.what.lower():
            # the same letters as a name the simulator has: a slip, and numba-cuda has no such name either
            self.failures.append({
                "kind": "runtime_error",
                "message": (f"There is no `{exc.what}` (line {line}, {where}): did you mean `{exc.near}`? "
                            "Python names are case-sensitive."),
                "block": block, "thread": _tdim(self, t), "line": line})
        elif isinstance(exc, Unsupported):  # numba-cuda may have it (cuda.uint8x4), or it may be a typo
            near = f" Did you mean `{exc.near}`?" if exc.near else ""
            self.failures.append({
                "kind": "unsupported",
                "message": (f"`{exc.what}` is not something the simulator models (line {line}, {where}).{near} "
                            "Use the features the lessons introduce, or check the file on a GPU, where the real "
                            "numba-cuda runs it."),
                "block": block, "thread": _tdim(self, t), "line": line})
        else:
            name = type(exc).__name__
            said = _indexed_a_number(exc, tb, self.filename, self.source_lines, line)
            self.failures.append({
                "kind": "runtime_error",
                "message": f"line {line} ({where}): {said}" if said else f"{name}: {exc} (line {line}, {where}).",
                "block": block, "thread": _tdim(self, t), "line": line})
        self.trace.stopped[t.tid] = "stopped by an error"
        self._abandon(threads, "stopped: the launch ended early")
        raise StopLaunch

    def timeout_failure(self, exc, block, thread, line) -> dict:
        """The timeout failure of `thread` of `block` (lanes.py words it as this module does)."""
        return _fail_timeout_message(exc, block, thread, line)

    def _fail_timeout(self, exc, t, line):
        if t is None:
            self.failures.append({"kind": "timeout", "message": exc.reason})
        else:
            self.failures.append(_fail_timeout_message(exc, self.block_pos[:self.grid_nd], _tdim(self, t), line))

    def _abandon(self, threads, reason):
        for t in threads:
            if not t.done:
                if t.tid not in self.trace.stopped:
                    self.trace.stopped[t.tid] = reason
                if t.worker is not None and t.worker is not getcurrent():
                    try:
                        t.worker.throw(GreenletExit)
                    except GreenletExit:
                        pass
                    t.worker = None
                t.done = True


_POOLS = threading.local()


def _pool_for(main) -> list:
    """Idle worker greenlets, kept across launches: a fresh greenlet costs several microseconds,
    a reused one a fraction of one. Workers belong to the greenlet that launches (per OS thread)."""
    state = _POOLS.__dict__
    if state.get("main") is not main:
        state["main"] = main
        state["pool"] = []
    return state["pool"]


def _worker_loop(task):
    """The body of a pooled greenlet: run simulated threads one after another, forever."""
    while True:
        fn, args = task
        try:
            fn(*args)
            result = _DONE
        except GreenletExit:
            raise
        except BaseException as e:  # the learner's error, reported with their line
            result = ("error", e)
        task = getcurrent().parent.switch(result)


@contextmanager
def watchdog(seconds: float, launch_getter, max_events: int = 5_000_000):
    """Raise KernelTimeout inside whatever kernel code is running once time or trace size runs out.

    A periodic SIGALRM checks both: Python delivers the signal between bytecodes, so even a
    `while True: pass` in a simulated thread is stopped where it spins, and the child stays alive."""
    if seconds is None or seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return
    deadline = time.monotonic() + seconds

    def on_alarm(signum, frame):
        launch = launch_getter()
        if launch is None or not launch.running:
            return  # our own bookkeeping between launches is never interrupted
        if time.monotonic() > deadline:
            raise KernelTimeout(f"The kernel ran past the time limit ({seconds:g} s).")
        if launch is not None and len(launch.events) > max_events:
            raise KernelTimeout(f"The kernel made more than {max_events:,} memory accesses, far more "
                                "than this puzzle needs.")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, old)


# -- small helpers --------------------------------------------------------------------------------
def _fail_timeout_message(exc, block, thread, line) -> dict:
    """The timeout failure of a thread that was running when time ran out."""
    return {"kind": "timeout", "block": block, "thread": thread, "line": line,
            "message": (f"{exc.reason} Thread {fmt_dim(thread)} of block {fmt_dim(block)} was at "
                        f"line {line}: look for a loop whose condition never changes.")}


def _dim3(value, what) -> tuple:
    if isinstance(value, (int, np.integer)):
        value = (int(value),)
    value = tuple(int(v) for v in value)
    if not 1 <= len(value) <= 3 or any(v < 1 for v in value):
        raise ValueError(f"{what} must be 1 to 3 positive numbers, got {value}")
    return value + (1,) * (3 - len(value))


_DTYPE_NAMES: dict = {}


def _dtype_name(dtype) -> str:
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


def _host_values(data, dtype) -> np.ndarray:
    """A simulated array's values as `dtype`. An integer too big for it wraps to its width, two's
    complement, as a GPU's store does (2**31 + 5 in an int32 is -2**31 + 5; -1 in a uint32 is
    2**32 - 1); numpy would refuse it."""
    try:
        return np.asarray(data, dtype=dtype)
    except OverflowError:
        if dtype.kind not in "iu":
            raise
        mask = (1 << (8 * dtype.itemsize)) - 1
        return np.asarray([v & mask for v in data], dtype=f"u{dtype.itemsize}").view(dtype)


def _tdim(launch, t) -> tuple:
    return (t.idx.x, t.idx.y, t.idx.z)[:launch.block_nd]


def _count(group, noun) -> str:
    return f"{len(group)} {noun}{'s' if len(group) != 1 else ''}"


def _thread_list(launch, group, most=4) -> str:
    names = [fmt_dim(_tdim(launch, t)) for t in group[:most]]
    if len(group) > most:
        names.append("...")
    return "threads " + ", ".join(names)


_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*=")


def _assigned_name(lines, line) -> str | None:
    if lines and line and 0 < line <= len(lines):
        m = _ASSIGN.match(lines[line - 1])
        if m:
            return m.group(1)
    return None


_NOT_INDEXABLE = re.compile(r"^'([\w.]+)' object (?:is not subscriptable|does not support item assignment)$")


def _indexed_a_number(exc, tb, filename, source_lines, line) -> str | None:
    """Python's "'int' object is not subscriptable", said as the real compiler's check says it
    (index_words.py), with the thread's own locals telling which name on the line holds the number."""
    match = _NOT_INDEXABLE.match(str(exc)) if isinstance(exc, TypeError) else None
    if match is None or line is None or not 0 < line <= len(source_lines):
        return None
    frame_locals = {}
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            frame_locals = tb.tb_frame.f_locals
        tb = tb.tb_next
    scalars = [k for k, v in frame_locals.items() if isinstance(v, (bool, int, float, complex, np.generic))]
    kind = match.group(1).removeprefix("numpy.")
    what = ("a boolean" if kind.startswith("bool") else "an integer" if "int" in kind
            else "a floating-point number" if "float" in kind else f"a {kind}")
    return not_an_array(source_lines[line - 1], what, names=scalars)


def _learner_line(tb, filename) -> int | None:
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _caller_line() -> int:
    return sys._getframe(2).f_lineno
