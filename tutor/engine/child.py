"""The process that runs learner code: `python -m tutor.engine.child BACKEND`, started by the
runner through the sandbox (see sandbox.py: cleared environment, its own folder and session,
rlimits, seccomp, Landlock, no network).

It reads requests on its dedicated channel and answers as wire messages (JSON and numpy buffers,
never pickle); stdout is /dev/null, so nothing a kernel prints can corrupt the protocol
(Python-level prints are captured into the verdict instead). It imports numba once, confines
itself, and then stays warm for the next run.
"""

from __future__ import annotations

import sys


def main(argv=None) -> int:
    from .process.sandbox import serve

    return serve(*handler(sys.argv[1:] if argv is None else argv))


def handler(argv: list[str]):
    """(handle, warm, fresh) for `BACKEND [CONTENT [ROLE]]`: what a warm child serves, and what the
    fork server (forkserver.py) warms once and forks a fresh child to serve for each untrusted check;
    `fresh` runs in each process once it is confined (a GPU's context is per process). ROLE says
    what the child will be asked, so that it warms only that (see warm_up)."""
    backend = argv[0] if argv else "sim"
    content = argv[1] if len(argv) > 1 and argv[1] else None
    role = argv[2] if len(argv) > 2 and argv[2] in ROLES else ""
    catalogs: dict = {}
    task_state: dict = {}  # a coaching task's candidate, loaded once per verification

    def warm():
        warm_up(backend, role)
        from tutor.puzzles import load_catalog

        catalogs[content] = load_catalog(content)  # puzzle.toml files only: no reference is read

    def fresh():
        if backend == "gpu":  # the CUDA context and a first launch in it, before the learner's run asks
            _launch_once(WARM_KERNEL)

    return (lambda request, arrays: handle(backend, request, catalogs, arrays, task_state)), warm, fresh


# What a child is for, when the runner knows it: "simulate" (a simulator check whose real-compiler
# check runs in another child), "compile" (that other child). "" : anything, so warm everything.
ROLES = ("", "simulate", "compile")


def warm_up(backend: str, role: str = "") -> None:
    """Pay numba's import (and the compiler's first run) before the learner presses run, and the
    engine's own imports (a forked child starts with them). A GPU's driver is not touched here: a
    fork server must not hold a CUDA context its children would share.

    A child with a role warms only what its requests need: the simulator's child never imports
    numba (our simulator runs without it: half a second and a core saved while the app starts,
    and the CLI's verdict is not kept waiting for it); the compiler's child imports numba and
    probes NVVM, whose first compile costs what the real check's first compile would."""
    if role == "compile":
        try:
            from .judge import compile_puzzle  # noqa: F401
            from .loading.compile import nvvm_missing

            nvvm_missing()
        except Exception:
            pass  # reported properly by the first real request
        return
    if role == "simulate" and backend == "sim":
        try:
            from . import judge  # noqa: F401
            from .analysis import counters, detect  # noqa: F401
            from .loading import sim_loader  # noqa: F401
            from .sim import launch  # noqa: F401

            _simulate_once(WARM_KERNEL)
        except Exception:
            pass
        return
    try:
        from . import judge, task_child  # noqa: F401
        from .analysis import counters, detect  # noqa: F401
        from .loading import module_builder, sim_loader  # noqa: F401
        from .sim import launch  # noqa: F401
        from .loading.compile import nvvm_missing

        if backend != "sim":
            from .gpu import import_cuda

            import_cuda()
        if backend != "numba-sim":  # Numba's simulator compiles nothing
            nvvm_missing()
        if backend == "sim":
            _run_once(WARM_KERNEL)
    except Exception:
        pass  # reported properly by the first real request


# What a first check pays once per process (Numba typing the cuda intrinsics, the simulator's and
# the detectors' first run), paid in warm-up instead: a kernel of no puzzle, so that no answer is in
# the memory a fork server's children start from.
WARM_KERNEL = """from numba import cuda, float32


@cuda.jit
def kernel(out, a, size):
    cache = cuda.shared.array(8, float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    cache[cuda.threadIdx.x] = a[i] if i < size else float32(0)
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        total = float32(0)
        for j in range(cuda.blockDim.x):
            total += cache[j]
        cuda.atomic.add(out, 0, total)
"""


def _launch_once(source: str) -> None:
    """A GPU process's own first launch (its context, the device's code generation, the allocator),
    of the warm-up kernel: our code, run before any request is read."""
    import numpy as np

    from .gpu import device_description, import_cuda
    from .loading.loader import load_for_numba

    device_description()
    cuda = import_cuda()
    kernel = load_for_numba(source, "warm.py", ["out", "a", "size"])["kernel"]
    out = cuda.to_device(np.zeros(1, np.float32))
    kernel[2, 8](out, cuda.to_device(np.ones(12, np.float32)), 12)
    out.copy_to_host()


def _run_once(source: str) -> None:
    from .loading.compile import compile_check

    compile_check(source, "warm.py", ["out", "a", "size"], [("array", "float32", 1)] * 2 + [("int",)], untrusted=True)
    _simulate_once(source)


def _simulate_once(source: str) -> None:
    import numpy as np

    from .judge import simulate
    from .analysis.counters import count

    trace, _ = simulate(source, [2], [8], [("out", np.zeros(1, np.float32)), ("a", np.ones(12, np.float32)),
                                          ("size", 12)])
    count(trace, source)


# the file prepare_numba loaded and compiled, for the check in the GPU's turn that follows it
_PREPARED: dict = {}


def handle(backend: str, request: dict, catalogs: dict, arrays: list = (), task_state: dict | None = None):
    """One protocol for every verdict: a puzzle's check (check, compile, prepare) and a coaching
    task's verification (task_load, task_run, task_time: see task_child.py)."""
    op = request["op"]
    if op == "ping":
        return "pong"
    if op.startswith("task_"):
        from .task_child import handle as task_handle

        return task_handle(backend, {} if task_state is None else task_state, {**request, "op": op[5:]}, list(arrays))
    if op in ("check", "compile", "prepare"):
        from tutor.puzzles import load_catalog

        root = request.get("content")
        if root not in catalogs:
            catalogs[root] = load_catalog(root)
        puzzle = catalogs[root].get(request["puzzle"])
        untrusted = bool(request.get("untrusted"))  # built from its syntax tree, never run (loader.execute)
        if op == "compile":
            from .judge import compile_puzzle

            return compile_puzzle(puzzle, request["source"], request["filename"], untrusted=untrusted)
        if request.get("untrusted") and backend == "numba-sim":  # Numba's simulator runs kernels as Python
            from .verdict import Failure

            return _refusal(puzzle, backend, request, [Failure(
                kind="unsupported", message=f"{_whose(request['untrusted'])} is checked on our simulator or a GPU, "
                                            "never on Numba's simulator (it would run the kernel as plain Python).")])
        configs = request["configs"]  # (config, inputs): the answers stay with the runner
        if backend == "sim" and op == "prepare":
            raise ValueError("the simulator takes no GPU turn: nothing to prepare")
        if backend == "sim":
            from .judge import run_sim

            return _outputs_only(run_sim(puzzle, request["source"], request["filename"], configs,
                                         seed=request.get("seed"), timeout=request["timeout"],
                                         compile=request.get("compile", True),
                                         compile_first=_whose(request["untrusted"]) if untrusted else False))
        from .gpu import TIMING_RUNS, prepare_numba, run_numba

        key = (request["puzzle"], request["source"], request["filename"])
        if op == "prepare":  # outside the GPU's turn: load, compile, size up
            answer, namespace = prepare_numba(puzzle, request["source"], request["filename"], configs,
                                              request.get("gpu_memory_mb"), untrusted=untrusted)
            _PREPARED.clear()  # one file at a time: the next check's edit replaces it
            if namespace is not None:
                _PREPARED[key] = namespace
            return answer
        timed = request.get("timed")
        return _outputs_only(run_numba(puzzle, request["source"], request["filename"], configs, seed=request.get("seed"),
                         timing_runs=int(request.get("timing_runs", TIMING_RUNS)), namespace=_PREPARED.get(key),
                         timed=None if timed is None else [int(n) for n in timed], untrusted=untrusted))
    raise ValueError(f"unknown request {op!r}")


SENT_EVENTS = 1_000_000  # of a check's traces, what goes back (about 30 MB: the answer's header is 64)


def _outputs_only(result):
    """The runner holds the configs' inputs: only what the kernels wrote goes back (the answer's
    limits are the outputs the runner asked for), with traces cut to SENT_EVENTS in all. Every
    detection has run on the whole trace here; what a cut trace keeps past its cut is the last write
    of each cell of `out`, so the judge still names who wrote a wrong cell."""
    from .trace import ATOMIC, WRITE

    traces = [run.trace for run in result.runs if run.trace is not None]
    total = sum(len(t.events) for t in traces)
    for run in result.runs:
        run.inputs = {}
    if total <= SENT_EVENTS:
        return result
    for trace in traces:
        keep = SENT_EVENTS * len(trace.events) // total
        if keep >= len(trace.events):
            continue
        out = trace.global_array("out")
        last = {e[3]: e for e in trace.events[keep:] if out is not None and e[2] == out.aid and e[1] in (WRITE, ATOMIC)}
        trace.events = trace.events[:keep] + list(last.values())
        trace.uninit_used = trace.oob_code = None  # they index the events cut off
        trace.printed += (f"\n[the trace is cut to its first {keep:,} accesses for the grid, and the last write of "
                          "each cell of out; every check ran on all of it]")
    return result


def _refusal(puzzle, backend: str, request: dict, failures: list):
    """A check that stops before anything of the file is loaded: its verdict, with why."""
    from .verdict import CheckResult
    from .verdict import Verdict

    return CheckResult(Verdict(puzzle=puzzle.id, backend=backend, seed=request.get("seed"),
                               failures=failures))


def _whose(untrusted) -> str:
    """Who wrote the code that must pass the real compiler first, for the messages that say so."""
    return "A learner's code in a served room" if untrusted == "served" else "Model-written code"


if __name__ == "__main__":
    sys.exit(main())
