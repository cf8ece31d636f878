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
    from .sandbox import serve

    argv = sys.argv[1:] if argv is None else argv
    backend = argv[0] if argv else "sim"
    catalogs: dict = {}
    return serve(lambda request, arrays: handle(backend, request, catalogs), warm=lambda: warm_up(backend))


def warm_up(backend: str) -> None:
    """Pay numba's import (and the compiler's first run) before the learner presses run."""
    try:
        if backend == "sim":
            from .compile import nvvm_missing

            nvvm_missing()
        else:
            from .gpu import import_cuda

            import_cuda()
    except Exception:
        pass  # reported properly by the first real request


# the file prepare_numba loaded and compiled, for the check in the GPU's turn that follows it
_PREPARED: dict = {}


def handle(backend: str, request: dict, catalogs: dict):
    op = request["op"]
    if op == "ping":
        return "pong"
    if op in ("check", "compile", "prepare"):
        from ..puzzles import load_catalog

        root = request.get("content")
        if root not in catalogs:
            catalogs[root] = load_catalog(root)
        puzzle = catalogs[root].get(request["puzzle"])
        refused = _module_level_refused(request) if request.get("untrusted") else []
        if refused and op == "compile":
            return refused[0], None
        if refused:
            return _refusal(puzzle, backend, request, refused)
        if op == "compile":
            from .check import compile_puzzle

            return compile_puzzle(puzzle, request["source"], request["filename"])
        if request.get("untrusted") and backend == "numba-sim":  # Numba's simulator runs kernels as Python
            from .verdict import Failure

            return _refusal(puzzle, backend, request, [Failure(
                kind="unsupported", message=f"{_whose(request['untrusted'])} is checked on our simulator or a GPU, "
                                            "never on Numba's simulator (it would run the kernel as plain Python).")])
        configs = request["configs"]  # (config, inputs): the answers stay with the runner
        if backend == "sim" and op == "prepare":
            raise ValueError("the simulator takes no GPU turn: nothing to prepare")
        if backend == "sim":
            from .check import run_sim

            return run_sim(puzzle, request["source"], request["filename"], configs, seed=request.get("seed"),
                           timeout=request["timeout"], compile=request.get("compile", True),
                           compile_first=_whose(request["untrusted"]) if request.get("untrusted") else False)
        from .gpu import TIMING_RUNS, prepare_numba, run_numba

        key = (request["puzzle"], request["source"], request["filename"])
        if op == "prepare":  # outside the GPU's turn: load, compile, size up
            answer, namespace = prepare_numba(puzzle, request["source"], request["filename"], configs,
                                              request.get("gpu_memory_mb"))
            _PREPARED.clear()  # one file at a time: the next check's edit replaces it
            if namespace is not None:
                _PREPARED[key] = namespace
            return answer
        timed = request.get("timed")
        return run_numba(puzzle, request["source"], request["filename"], configs, seed=request.get("seed"),
                         timing_runs=int(request.get("timing_runs", TIMING_RUNS)), namespace=_PREPARED.get(key),
                         timed=None if timed is None else [int(n) for n in timed])
    raise ValueError(f"unknown request {op!r}")


def _refusal(puzzle, backend: str, request: dict, failures: list):
    """A check that stops before anything of the file is loaded: its verdict, with why."""
    from .check import CheckResult
    from .verdict import Verdict

    return CheckResult(Verdict(puzzle=puzzle.id, backend=backend, passed=False, seed=request.get("seed"),
                               failures=failures))


def _module_level_refused(request: dict) -> list:
    """Untrusted code's module level is screened before any of it is loaded (static_rules.
    check_module_level): loading runs it as Python, before Numba's compiler has seen the kernel."""
    from .static_rules import check_module_level
    from .verdict import Failure

    whose = _whose(request["untrusted"])
    return [Failure(kind="static", rule=f.rule, line=f.line,
                    message=f"{whose} is loaded only when its module level is plain definitions: {f.message} {f.fix}")
            for f in check_module_level(request["source"], request["filename"])]


def _whose(untrusted) -> str:
    """Who wrote the code that must pass the real compiler first, for the messages that say so."""
    return "A learner's code in a served room" if untrusted == "served" else "Model-written code"


if __name__ == "__main__":
    sys.exit(main())
