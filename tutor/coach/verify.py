"""`gpu-tutor verify TASK FILE`: every candidate kernel proves itself before anyone sees it.

First a static screen of the source (nothing runs), then a fresh child process per candidate with a
time limit and a memory cap, where the dynamic checks happen (see verify_child). The answer is one
JSON-ready dict: {"task", "backend", "correct", "failures": [...], "flags": [...], ...}.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

DEFAULT_TIMEOUT = 120.0
MEMORY_MB = 8192


def verify(task: str, source: str, backend: str = "sim", *, timeout: float = DEFAULT_TIMEOUT,
           on_wait=None) -> dict:
    """`on_wait(n)` hears "n ahead" while a GPU verification waits for its turn."""
    from .screen import screen
    from .tasks import load_task

    load_task(task)  # an unknown task is a usage error (KeyError), before anything runs
    result = {"task": task, "backend": backend, "correct": False, "failures": [], "flags": []}
    findings = screen(source, "candidate.py")
    if findings:
        result["failures"] = [{"kind": "static", "rule": f.rule, "line": f.line,
                               "message": f"{f.message} {f.fix}".strip()} for f in findings]
        return result
    env = dict(os.environ)
    env["NUMBA_ENABLE_CUDASIM"] = "1" if backend == "numba-sim" else "0"
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    cap = MEMORY_MB * 1024 * 1024 if backend != "gpu" else None

    def limit():
        if cap:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    queue = None
    if backend == "gpu":  # candidates on a shared GPU server take their turn like learners' runs do
        from ..engine.gpulock import shared_queue

        queue = shared_queue()
    turn = queue.turn(on_wait=on_wait) if queue is not None else contextlib.nullcontext()
    try:
        with turn:
            proc = subprocess.run([sys.executable, "-m", "tutor.coach.verify_child", task, backend], input=source,
                                  capture_output=True, text=True, timeout=timeout, env=env, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        result["failures"].append({"kind": "timeout", "message": f"the candidate did not finish within {timeout:g} s"})
        return result
    line = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    try:
        child = json.loads(line)
    except json.JSONDecodeError:
        tail = proc.stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        result["failures"].append({"kind": "runtime_error",
                                   "message": f"the candidate's process ended without a verdict: {tail[0]}"})
        return result
    return child


def verify_text(result: dict) -> str:
    head = f"{result['task']} on {result['backend']}: {'CORRECT' if result['correct'] else 'REJECTED'}"
    lines = [head]
    for f in result["failures"]:
        rule = f"/{f['rule']}" if f.get("rule") else ""
        lines.append(f"  x {f['kind']}{rule}: {f['message']}")
    for b in result.get("global_bytes", []):
        lines.append(f"  global memory moved for shape {tuple(b['shape'])}: {b['bytes']:,} bytes")
    for flag in result.get("flags", []):
        lines.append(f"  flag: {flag}")
    return "\n".join(lines)
