"""The candidate's side of a coaching task's verification, in the sandboxed child (child.py routes
its `task_*` requests here: one child, one protocol, for puzzles and tasks).

It never holds the answer. The parent (verify.py) draws the inputs from a seed the candidate cannot
see, sends them here, and judges what comes back against the reference it alone computes. This
process only loads the candidate, runs its launch() on what it is given, and reports the outputs
with the records of what ran: on the simulator, every launch is first noted without running, each
kernel is compiled by the real Numba compiler for the argument types of its launch, and only then
do the kernels run, traced. Whatever the candidate patches or caches dies with this process.
"""

from __future__ import annotations

import gc
import numbers
import sys

import numpy as np

FILENAME = "candidate.py"


def handle(backend: str, state: dict, request: dict, arrays: list):
    op = request.get("op")
    if op == "load":
        return load(backend, state, request["source"])
    if op == "run":
        return run(backend, state, arrays, tuple(request["out_shape"]), _starts(request), _sample(request),
                   model=bool(request.get("model")))
    if op == "time":
        return time_on_gpu(state, request, arrays)
    if op == "plan" and backend == "sim":
        return plan_at(state, request.get("shapes"))
    raise ValueError(f"unknown request {op!r}")


def load(backend: str, state: dict, source: str) -> dict:
    """Load the candidate module (its module level is only imports, constants and defs: the screen
    saw to that). Returns {"failures": [...]} when it does not load."""
    from .loading.loader import LoadError, load_module_for_numba
    from .loading.sim_loader import load_module_for_sim

    state["source"] = source
    try:
        if backend == "sim":
            from .loading.compile import compiler_required

            refusal = compiler_required("A candidate on the simulator")
            if refusal:
                return {"failures": [{"kind": "compile_error", "message": refusal}]}
            state["module"] = load_module_for_sim(source, FILENAME, untrusted=True)
            state["compiled"] = set()
        else:
            from .gpu import import_cuda

            state["cuda"] = import_cuda()
            state["launch"] = load_module_for_numba(source, FILENAME, untrusted=True)["launch"]
    except LoadError as e:
        return {"failures": [{"kind": e.kind if e.kind != "runtime_error" else "compile_error",
                              "message": e.message, "line": e.line}]}
    if backend == "sim" and not callable(state["module"].namespace.get("launch")):
        return {"failures": [{"kind": "compile_error", "message": "the module defines no launch(out, *inputs)"}]}
    if backend == "sim":
        state["executable"], state["covered"] = _executable_lines(state["module"].namespace), set()
        return {"failures": [], "lines": sorted(state["executable"])}
    return {"failures": []}


def _executable_lines(namespace: dict) -> set[int]:
    """The lines of the candidate's launch(), kernels and device functions that execute anything:
    what a verification must see run to have checked them."""
    import types

    from .sim.launch import SimKernel

    lines: set[int] = set()
    for value in namespace.values():
        fn = value.py_func if isinstance(value, SimKernel) else value
        if not isinstance(fn, types.FunctionType) or fn.__code__.co_filename != FILENAME:
            continue
        code = fn.__code__
        stack = [code]
        while stack:
            c = stack.pop()
            lines.update(line for _, _, line in c.co_lines() if line is not None)
            stack += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return lines


class LinesRun:
    """The candidate's lines that run while the block lasts (sys.settrace, in every greenlet of
    the simulator's blocks too): which of its lines a verified shape reached."""

    def __init__(self, watch: bool = True):
        self.lines: set[int] = set()
        self.watch = watch

    def __enter__(self):
        if not self.watch:
            return self
        lines = self.lines

        def in_candidate(frame, event, arg):
            if event == "line":
                lines.add(frame.f_lineno)
            return in_candidate

        def calls(frame, event, arg):
            if frame.f_code.co_filename != FILENAME:
                return None
            lines.add(frame.f_lineno)
            return in_candidate

        calls.lines_sink = lines  # where a launch run as lanes (sim/lanes.py) puts the lines it ran
        self._before = sys.gettrace()
        sys.settrace(calls)
        return self

    def __exit__(self, *exc):
        if self.watch:
            sys.settrace(self._before)


def _starts(request: dict) -> list:
    """What `out` holds before each run, as the parent chose: a coaching task's `out` may hold
    anything, so each shape is judged from two different starts (NaN, zeros, random numbers), and a
    kernel whose answer depends on what `out` held fails one of them. Never the answer: it stays
    with the parent."""
    starts = request.get("starts")
    if not isinstance(starts, list) or not 1 <= len(starts) <= 4:
        return ["nan"] * max(1, min(4, int(request.get("repeat", 2))))
    return [s if isinstance(s, (str, int)) and not isinstance(s, bool) else "nan" for s in starts]


def start_of(start, out_shape: tuple) -> np.ndarray:
    """`out` as a run starts: "nan", "zeros", or an int seed for random finite numbers."""
    if start == "zeros":
        return np.zeros(out_shape, dtype=np.float32)
    if isinstance(start, int):
        return np.random.default_rng(start).uniform(-1e3, 1e3, size=out_shape).astype(np.float32)
    return np.full(out_shape, np.nan, dtype=np.float32)


def _sample(request: dict):
    """The parent's word on sampling blocks at this shape: {"seed": int, "seconds": float}, or None."""
    s = request.get("sample")
    if not isinstance(s, dict) or not isinstance(s.get("seed"), int) or not isinstance(s.get("seconds"), (int, float)):
        return None
    second = s.get("second") if isinstance(s.get("second"), (int, float)) else SECOND_START_S
    return {"seed": int(s["seed"]), "seconds": min(max(float(s["seconds"]), 0.1), 60.0),
            "second": min(max(float(second), 0.1), 60.0)}


SECOND_START_S = 2.0  # a second start of `out` runs on the blocks that fit in this (at least the first and last)


def run(backend: str, state: dict, inputs: list, out_shape: tuple, starts: list, sample=None, model: bool = False):
    """Run launch(out, *inputs) once per start (start_of: what `out` holds before the run). Answers with the records and
    the arrays [output of each run..., the inputs as the runs left them]. With `model` (the scored
    shape, on the simulator) the records carry the first run's modelled H200 time too."""
    if backend == "sim":
        return _run_sim(state, inputs, out_shape, starts, model, sample)
    cuda, launch = state["cuda"], state["launch"]
    d_inputs = [cuda.to_device(x) for x in inputs]
    outs = []
    for start in starts:
        d_out = cuda.to_device(start_of(start, out_shape))
        launch(d_out, *d_inputs)
        cuda.synchronize()
        outs.append(d_out.copy_to_host())
    return {"issues": [], "launches": None, "moved": None}, outs + [d.copy_to_host() for d in d_inputs]


def _run_sim(state, inputs, out_shape, starts, model=False, sample=None):
    # A large shape's trace is millions of small tuples: with the cyclic collector on, each of the
    # many collections its judging triggers would walk all of them (a third of the time at attention's
    # drawn shape). Nothing here makes cycles worth collecting; refcounting frees the traces.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _run_sim_uncollected(state, inputs, out_shape, starts, model, sample)
    finally:
        if was_enabled:
            gc.enable()


def _run_sim_uncollected(state, inputs, out_shape, starts, model=False, sample=None):
    """The first start runs every block, or with `sample` (a large drawn shape) the blocks that fit
    its seconds; a later start runs on the blocks that fit SECOND_START_S of those. Both are judged
    on the cells that the blocks they ran wrote in the first run (the answer's last array, a mask,
    when anything was left out). Sampling is sound only where the blocks are independent: launch()
    makes one launch and the kernel makes no global atomic (a block's cells are then its own work:
    a block that read another's cells in the same launch is a race the detectors report). Where
    that does not hold every block runs."""
    from .loading.compile import launches_ptx
    from .sim.launch import Sample, records
    from .sim.linecounts import LineRuns

    module = state["module"]
    launch, cuda = module.namespace["launch"], module.cuda
    planned, refused = _planned(state, np.full(out_shape, np.nan, dtype=np.float32), [x.copy() for x in inputs])
    if refused:  # a kernel the compiler refuses, or a launch a GPU refuses: not one line of it runs there
        return {"issues": refused, "launches": len(planned.launches), "moved": 0, "ran": False}, []
    outs, issues, moved, launched, writes, modelled, counted = [], [], 0, 0, {}, None, []
    single = len(planned.launches) == 1
    first_sample = Sample(sample["seed"], sample["seconds"]) if sample and single else None
    ran_first, first_trace, masks = None, None, []
    replay = None  # (the first run's plan, the cells of out it wrote, their values): see _replayable
    replayed = 0   # later starts answered from the first run's writes
    for n, start in enumerate(starts):
        out = start_of(start, out_shape)
        if replay is not None:
            with records(cuda, record_only=True) as again:
                launch(*_handles(out, inputs))
            if _plan(again.plans, out, inputs) == replay[0]:
                out.reshape(-1)[replay[1]] = replay[2]
                replayed += 1
                outs.append(out)
                masks.append(ran_first)
                continue
            out = start_of(start, out_shape)
        if n == 0:
            how = first_sample
        elif single:
            second = sample["second"] if sample else SECOND_START_S
            # a later start shows a kernel that reads out before writing it in any block: the
            # smallest first (the last block of a ragged launch), as many as its share of time allows
            if ran_first is not None:
                how = Sample(blocks=list(reversed(ran_first)), seconds=second, least=1)
            else:
                how = Sample(blocks=None, seconds=second, least=1)
        else:
            how = None
        # the lines that run, until every line has: tracing them costs a Python call per line run
        watch = n == 0 and not state.get("executable", set()) <= state.setdefault("covered", set())
        # where the time is modelled, each warp's runs of each line too (what its instructions cost)
        follow = (lambda: LineRuns(cuda, FILENAME, state["source"])) if model and n == 0 else \
            (lambda: LinesRun(watch))
        with records(cuda, trace_local=False, sample=how) as done, follow() as ran_lines:
            launch(*_handles(out, inputs))  # no one reads these traces thread by thread
        if n == 0:
            covered = ran_lines.lines
            state["covered"] |= covered
        ran = done.ran_blocks[0][0] if len(done.ran_blocks) == 1 else None
        if n == 0 and ran is not None and (_global_atomics(done.traces[0][0]) or not _could_cover(
                done.traces[0][0], ran, done.ran_blocks[0][1], out.size)):
            # Blocks that add into one another's cells, or blocks that cannot have written every cell
            # of out between them (the most one sampled block wrote, times the blocks, is short of it:
            # a grid rounded down, columns past a width never written): every block runs, so that
            # the cells nobody wrote are judged as such.
            out = start_of(start, out_shape)
            with records(cuda, trace_local=False) as done, follow():
                launch(*_handles(out, inputs))
            ran = None
        if n == 0:
            ran_first, first_trace = ran, done.traces[0][0] if len(done.traces) == 1 else None
            if ran is not None:
                answer_sampled = {"ran": len(ran), "of": done.ran_blocks[0][1]}
        masks.append(None if ran is None else ran)
        if any(k not in state["compiled"] for k in done.launches):
            issues.append({"kind": "runtime_error", "message": "launch() launched a kernel it did not launch "
                                                               "when it was planned; it must depend on sizes only"})
        outs.append(out)
        if n == 0:  # the first run's records; the repeat is judged by its output alone
            moved, found, writes = _judge_traces(done.traces, [k[0] for k in done.launches])
            launched = len(done.launches)
            issues += found
            if not found and len(starts) > 1:
                replay = _replayable(done, out, inputs)
            if model and ran is None:  # a sample's trace is not the launch's: no modelled time from it
                ptx = launches_ptx(state["source"], FILENAME, done.launches, untrusted=True)
                modelled = _modelled(done.traces, [k[0] for k in done.launches], state["source"],
                                     [ptx.get(k) for k in done.launches])
                counted = _counted(done.traces, state["source"])
    answer = {"issues": _unique(issues), "launches": launched, "moved": moved, "ran": True, "writes": writes,
              "lines": sorted(covered), "replayed": replayed}
    if ran_first is not None:
        answer["sampled"] = answer_sampled
    judged = [_written_by(first_trace, blocks, out_shape) if blocks is not None and first_trace is not None else None
              for blocks in masks]
    if any(m is not None for m in judged):
        full = np.ones(out_shape, dtype=np.uint8)
        answer["judged_cells"] = True  # the answer ends with one mask per start: the cells judged
        return answer | ({"modelled": modelled, "counters": counted} if model else {}), \
            outs + list(inputs) + [full if m is None else m for m in judged]
    if model:
        answer["modelled"] = modelled
        answer["counters"] = counted
    return answer, outs + list(inputs)


MAX_PLANNED_MB = 2048  # of zeros at one shape: a GPU shape's inputs and out (attention's largest: 32 MB)


def plan_at(state: dict, shapes) -> dict:
    """What a GPU would refuse at the shapes the candidate is timed at, without running a kernel:
    launch() at each shape's sizes (its arrays all zeros: launch() holds device arrays, whose values
    it cannot read on a GPU) with every launch recorded, not run. The simulator's own shapes are
    small; a block size, a grid or dynamic shared memory computed from a size can pass there and be
    refused at a GPU's shape (the keys of a whole head in shared memory: 36 KB at the largest drawn
    shape, 131 KB at (1, 2, 257, 128)). `shapes`: [{"where", "out": shape, "inputs": [[shape,
    dtype], ...]}]. Answers {"issues": [...], "skipped": [shapes not planned]}, the first shape's
    refusal only. A shape whose scratch arrays this process cannot hold (its memory is capped; a
    GPU's is larger) is skipped, not failed."""
    skipped: list[str] = []  # shapes whose planning ran out of this process's memory
    for item in shapes if isinstance(shapes, list) else []:
        where = str(item.get("where", "a GPU shape"))
        arrays = [(tuple(int(n) for n in item["out"]), "float32")] + \
                 [(tuple(int(n) for n in shape), str(dtype)) for shape, dtype in item["inputs"]]
        if sum(int(np.prod(shape)) * np.dtype(dtype).itemsize for shape, dtype in arrays) > MAX_PLANNED_MB << 20:
            skipped.append(where)
            continue
        out, *inputs = [np.zeros(shape, dtype=np.dtype(dtype)) for shape, dtype in arrays]
        try:
            _, refused = _planned(state, out, inputs)
        except MemoryError:  # scratch a GPU's memory holds and this process may not: not the candidate's fault
            skipped.append(where)
            continue
        except Exception as e:  # noqa: BLE001 (what the launch said, where the candidate's code said it)
            refused = [{"kind": "runtime_error", "line": _candidate_line(e), "message": f"{type(e).__name__}: {e}"}]
        if refused:
            return {"issues": [f | {"config": where, "message": f"{f['message']} (at {where}, where a GPU times it: "
                                                                "launch() planned there, no kernel run)"}
                               for f in refused]}
    return {"issues": [], "skipped": skipped}


def _handles(out, arrays) -> list:
    """What launch() holds, as on a GPU: sizes and kernels, no host maths."""
    from .sim.devicearray import DeviceArray

    return [DeviceArray(out, "out")] + [DeviceArray(x, f"input:{i}") for i, x in enumerate(arrays)]


def _planned(state: dict, out, inputs) -> tuple:
    """(records of what launch(out, *inputs) would launch, no kernel run; the failures that stop it
    before any kernel runs): each kernel new to this module is compiled with the real compiler, then
    every launch is held to a GPU's limits (_refused_launches). An error of launch() itself is
    raised."""
    from .loading.compile import compile_launches
    from .sim.launch import records

    module = state["module"]
    with records(module.cuda, record_only=True) as planned:
        module.namespace["launch"](*_handles(out, inputs))
    fresh = [k for k in dict.fromkeys(planned.launches) if k not in state["compiled"]]
    if fresh:
        failures = compile_launches(state["source"], FILENAME, fresh, untrusted=True)
        if failures:
            return planned, failures
        state["compiled"].update(fresh)
    return planned, _refused_launches(state["source"], module, planned)


def _candidate_line(error: BaseException) -> int | None:
    """The candidate's innermost line in the error's traceback (None if it never reached it)."""
    tb, line = error.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == FILENAME:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _refused_launches(source: str, module, planned) -> list[dict]:
    """One runtime_error per kernel that some planned launch gives more threads than its registers
    let an SM hold, or more dynamic shared memory than its static arrays leave a block
    (resources.py): the simulator has no register file and no 48 KiB; a GPU refuses the launch."""
    from .loading.compile import launch_resources
    from .loading.resources import out_of_registers, too_much_shared

    issues, refused, seen = [], set(), set()
    for launch, plan in zip(planned.launches, planned.plans):
        block, dynamic = plan[2], plan[3]
        threads = int(np.prod(block)) if isinstance(block, (tuple, list)) else int(block)
        dynamic = int(dynamic) if isinstance(dynamic, numbers.Real) else 0
        if (launch, threads, dynamic) in seen or launch[0] in refused:
            continue
        seen.add((launch, threads, dynamic))
        counted = launch_resources(source, launch, threads)
        if counted is None:
            continue
        registers, cap, static = counted
        message = out_of_registers(launch[0], registers, threads, cap) or too_much_shared(launch[0], static, dynamic)
        if message:
            refused.add(launch[0])
            kernel = module.namespace.get(launch[0])
            code = getattr(getattr(kernel, "py_func", None), "__code__", None)
            issues.append({"kind": "runtime_error", "message": message,
                           "line": code.co_firstlineno if code else None})
    return issues


def _replayable(done, out, inputs):
    """(plan, cells, values) where a later start of `out` cannot change what the first run's
    kernels did, else None. A kernel sees `out`'s start only by reading it; one that never reads
    it, writes no input, and touches no global memory but launch()'s own arrays, launched again
    by the same plan (the same kernels, grids, blocks, scalars, and `out` and the inputs in the
    same places), makes the same writes from any start: the later start's answer is its start
    with those cells written as the first run wrote them. Simulating it again (most of a large
    drawn shape's time) would tell nothing more. Anything else, a failure in the first run too,
    runs again."""
    from .trace import ATOMIC, GLOBAL, READ, UNINIT_READ, WRITE, int_columns

    plan = _plan(done.plans, out, inputs)
    if plan is None or not done.traces:
        return None
    cells = []
    for trace, failures in done.traces:
        if failures:
            return None
        roles = list(trace.roles or [])
        # per array: 0 shared, local or constant; 1 out; 2 an input; 3 any other global memory
        kinds = np.array([(1 if roles[a] == "out" else 2 if isinstance(roles[a], str) and roles[a].startswith("input:")
                           else 3) if a < len(roles) else (3 if info.space == GLOBAL else 0)
                          for a, info in enumerate(trace.arrays)] or [0], dtype=np.int8)
        if not trace.events:
            continue
        op, aid, flat = int_columns(trace, ("op", "aid", "flat"))
        kind = kinds[aid]
        reads = (op == READ) | (op == UNINIT_READ) | (op == ATOMIC)
        writes = (op == WRITE) | (op == ATOMIC)
        if (kind == 3).any() or (reads & (kind == 1)).any() or (writes & (kind == 2)).any():
            return None
        cells.append(flat[writes & (kind == 1)])
    written = np.zeros(out.size, dtype=bool)
    for flat in cells:
        if len(flat) and (flat.min() < 0 or flat.max() >= out.size):
            return None
        written[flat] = True
    return plan, written, out.reshape(-1)[written].copy()


def _plan(plans, out, inputs):
    """records.plans with each array named by what it is ("out", "input:0", ...), or None where
    an array is neither (a scratch array, a view): then no two runs are known to do the same."""
    names = {id(out): "out", **{id(x): f"input:{i}" for i, x in enumerate(inputs)}}
    named = []
    for kernel, grid, block, shared, args in plans:
        described = []
        for a in args:
            if a[0] == "array":
                if a[1] not in names:
                    return None
                described.append(("array", names[a[1]]))
            else:
                described.append(a)
        named.append((kernel, grid, block, shared, tuple(described)))
    return named


def _global_atomics(trace) -> bool:
    from .trace import ATOMIC, GLOBAL, int_columns

    if not trace.events:
        return False
    op, aid = int_columns(trace, ("op", "aid"))
    is_global = np.array([a.space == GLOBAL for a in trace.arrays], dtype=bool)
    return bool(((op == ATOMIC) & is_global[aid]).any())


def _out_writes(trace):
    """(block's linear number, flat cell) of every write or atomic into launch()'s `out` in `trace`,
    as two arrays."""
    from .trace import ATOMIC, WRITE, int_columns

    roles = list(trace.roles or [])
    if "out" not in roles or not trace.events:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    tid, op, aid, flat = int_columns(trace, ("tid", "op", "aid", "flat"))
    chosen = (aid == roles.index("out")) & ((op == WRITE) | (op == ATOMIC))
    return tid[chosen] // trace.threads_per_block, flat[chosen]


def _could_cover(trace, blocks, total: int, size: int) -> bool:
    """Whether `total` blocks writing as many cells of `out` as the busiest sampled block did could
    write all `size` of them: if every cell is written, some block writes at least size / total."""
    if "out" not in (trace.roles or []) or not blocks:
        return True
    block, flat = _out_writes(trace)
    if not len(block):
        return 0 >= size
    pairs = np.unique(np.stack([block, flat]), axis=1)  # each (block, cell) once
    most = int(np.bincount(pairs[0] - pairs[0].min()).max())
    return most * total >= size


def _written_by(trace, blocks, out_shape) -> np.ndarray:
    """The cells of `out` that `blocks` wrote in `trace` (a mask of out's shape, as uint8)."""
    mask = np.zeros(int(np.prod(out_shape)), dtype=np.uint8)
    gx, gy, _ = trace.grid
    keep = np.array(sorted({x + gx * (y + gy * z) for x, y, z in blocks}), dtype=np.int64)
    block, flat = _out_writes(trace)
    chosen = np.isin(block, keep) & (flat >= 0) & (flat < mask.size)
    mask[flat[chosen]] = 1
    return mask.reshape(out_shape)


def _modelled(traces, kernels, source, ptx=None) -> dict:
    """The launch's modelled H200 time (engine/analysis/modelled_time.py), where the bytes are counted: the
    optimiser's score on the simulator. A fault of the model is reported, not raised: it costs the
    candidate its score, never its verdict."""
    from .analysis.modelled_time import modelled_time

    try:
        return modelled_time([t for t, _ in traces], source, "h200", names=list(kernels), ptx=ptx).to_json()
    except Exception as e:  # noqa: BLE001 (the model's own fault, said in the answer)
        return {"error": f"{type(e).__name__}: {e}"[:300]}


def _counted(traces, source) -> list:
    """Each kernel's counters at the scored shape, for `gpu-tutor profile TASK`: shown, never scored."""
    from .analysis.counters import count

    try:
        return [count(t, source).to_json() for t, _ in traces]
    except Exception:  # noqa: BLE001 (a fault here costs the profile, never the verdict)
        return []


_WHERE = ("line", "block", "thread", "array", "index", "other_thread")


def _judge_traces(traces, kernels=()):
    """(global bytes moved, failures with their line, block, thread and array, the first write into
    each input: {input index: {"line", "kernel"}})."""
    from .analysis import detect
    from .trace import ATOMIC, GLOBAL, OOB_READ, OOB_WRITE, WRITE, int_columns

    moved, found, writes = 0, [], {}
    for n, (trace, failures) in enumerate(traces):
        found += [_issue(f) for f in failures]
        if trace.events:
            op, aid, line = int_columns(trace, ("op", "aid", "line"))
            # global bytes moved: each array's in-bounds accesses times its element's size
            size = np.array([np.dtype(a.dtype).itemsize if a.space == GLOBAL else 0 for a in trace.arrays],
                            dtype=np.int64)
            in_bounds = (op != OOB_READ) & (op != OOB_WRITE)
            moved += int(size[aid[in_bounds]].sum())
            inputs = {aid: int(role.split(":")[1]) for aid, role in enumerate(trace.roles or [])
                      if isinstance(role, str) and role.startswith("input:")}
            stores = np.flatnonzero((op == WRITE) | (op == ATOMIC))
            for a, index in inputs.items():
                first = stores[aid[stores] == a]
                if len(first) and str(index) not in writes:
                    writes[str(index)] = {"line": int(line[first[0]]), "kernel": kernels[n] if n < len(kernels) else "?"}
        found += [_issue(f) for f in detect.find_all(trace, None)]
    return moved, found, writes


def _issue(f) -> dict:
    """A failure as the parent's wire carries it: plain values, its location kept."""
    get = f.get if isinstance(f, dict) else lambda k, d=None: getattr(f, k, d)
    out = {"kind": get("kind"), "message": get("message")}
    for key in _WHERE:
        value = get(key)
        if value is not None:
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


def time_on_gpu(state: dict, request: dict, arrays: list):
    """Time the candidate and the task's naive baseline on the same inputs (gpu_timing: warm-up
    excluded, L2 flushed, device time with the host's enqueue beside it), then run the candidate
    once more on the fresh inputs the parent sent, for the parent to check."""
    from .loading.loader import load_module_for_numba
    from .process.gpu_timing import Timer

    cuda = state["cuda"]
    n = int(request["n_inputs"])
    inputs, fresh = arrays[:n], arrays[n:2 * n]
    out_shape = tuple(request["out_shape"])
    timer = Timer(cuda)

    poison = np.full(out_shape, np.nan, dtype=np.float32)
    kept = [int(k) for k in request.get("keep_runs", [])]  # the parent's choice of timed runs to judge

    def timed(launch, keep):
        d_inputs = [cuda.to_device(x) for x in inputs]
        d_out = cuda.device_array(out_shape, dtype=np.float32)

        def after(n):
            if n in kept:
                keep.append(d_out.copy_to_host())

        return timer.time(lambda: launch(d_out, *d_inputs), int(request["runs"]),
                          reset=lambda: d_out.copy_to_device(poison), after=after)

    outputs: list = []
    mine = timed(state["launch"], outputs)
    base = timed(load_module_for_numba(request["baseline"], "naive.py")["launch"], [])
    d_out = cuda.to_device(poison)
    state["launch"](d_out, *[cuda.to_device(x) for x in fresh])
    cuda.synchronize()
    return {"mine": mine, "base": base}, [d_out.copy_to_host()] + outputs


def _unique(issues):
    seen, out = set(), []
    for i in issues:
        key = (i["kind"], i["message"])
        if key not in seen:
            seen.add(key)
            out.append(i)
    return out

