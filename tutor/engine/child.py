"""The process that runs learner code: `python -m tutor.engine.child BACKEND`.

It reads pickled requests on stdin and answers on a private copy of stdout; the real fd 1 is
pointed at /dev/null so that nothing a kernel prints can corrupt the protocol (Python-level prints
are captured into the verdict instead). It imports numba once and then stays warm for the next run.
A memory cap applies to everything it does.
"""

from __future__ import annotations

import os
import pickle
import resource
import struct
import sys
import traceback

HEADER = struct.Struct("!Q")


def read_message(stream):
    head = stream.read(HEADER.size)
    if len(head) < HEADER.size:
        return None
    (size,) = HEADER.unpack(head)
    body = stream.read(size)
    return pickle.loads(body)


def write_message(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    backend = argv[0] if argv else "sim"
    memory_mb = int(argv[1]) if len(argv) > 1 else 0
    answers = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    sys.stdout = open(os.devnull, "w")
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    requests = sys.stdin.buffer
    warm_up(backend)
    catalogs = {}
    while True:
        request = read_message(requests)
        if request is None:
            return 0
        try:
            answer = ("ok", handle(backend, request, catalogs))
        except Exception as e:  # ours, not the learner's: report it whole rather than die
            answer = ("error", type(e).__name__, str(e), traceback.format_exc())
        write_message(answers, answer)


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


def handle(backend: str, request: dict, catalogs: dict):
    op = request["op"]
    if op == "ping":
        return "pong"
    if op in ("check", "compile"):
        from ..puzzles import load_catalog

        root = request.get("content")
        if root not in catalogs:
            catalogs[root] = load_catalog(root)
        puzzle = catalogs[root].get(request["puzzle"])
        if op == "compile":
            from .check import arg_types
            from .compile import compile_check, nvvm_missing

            missing = nvvm_missing()
            if missing:
                return None, missing
            return compile_check(request["source"], request["filename"], puzzle.signature,
                                 arg_types(puzzle, puzzle.configs[0])), None
        if backend == "sim":
            from .check import check_sim

            return check_sim(puzzle, request["source"], request["filename"], seed=request.get("seed"),
                             n_random=request.get("n_random", 3), timeout=request["timeout"],
                             compile=request.get("compile", True), keep_traces=request.get("keep_traces", True))
        from .gpu import check_numba

        return check_numba(puzzle, request["source"], request["filename"], seed=request.get("seed"),
                           n_random=request.get("n_random", 3))
    raise ValueError(f"unknown request {op!r}")


if __name__ == "__main__":
    sys.exit(main())
