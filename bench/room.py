"""A room on one GPU: N learners' apps checking kernels at once, each with its own warm GPU child.

    python3 bench/room.py --n 1,10,30 --duration 120 --json room.json      # on the GPU server
    .venv/bin/python bench/room.py --backend sim --n 1,4 --duration 20       # here, no GPU: no queue

For each N the parent starts N learner processes (this file with `--learner K`), each with its own
data folder (GPU_TUTOR_DATA) and one shared GPU queue folder (GPU_TUTOR_GPU_QUEUE, the machine-wide
queue of tutor/engine/process/gpulock.py; `--turns K` passes GPU_TUTOR_GPU_TURNS through). Each learner keeps
one warm `Runner(backend)` (on a GPU: its GPU child and the simulator's child beside it), warms it
with one check, says it is ready, and when every learner is ready they all start together: every
`--period` seconds (jittered, 0.5-1.5x) a fresh edit of a classic puzzle's reference, for
`--duration` seconds. A fresh edit is the reference with `_room_edit = <a number never used before>`
as the kernel's first statement, so the child loads and compiles new code every time. Some learners
make mistakes on purpose: learners 1, 6, 11, ... (K % 5 == 1) submit a wrong kernel (`+ 1` on the
last write to `out`) every `--wrong-every` checks, and learners 3, 13, 23 (K % 10 == 3) an endless
one (that write inside a loop that never ends) every `--endless-every` checks.

Per check a learner records: the wait for its GPU turn and how long it held it (the runner's
`last_turn` where it has one, else the queue's own turn timed here), run-to-verdict (calling
`check` to its return), the verdict (passed, kinds), and whether it is right: an edit of the
reference must pass, a wrong kernel fail with wrong_output, an endless one fail with timeout.
Lost: the check raised, or its learner died before answering. The parent samples the GPU with
nvidia-smi (or pynvml) every 500 ms while the learners run.

Per N it prints one table row: checks; the turn wait and run-to-verdict (all checks, and the good
ones), median / p95 / max in seconds; the GPU's utilisation (mean / max) and memory, and the share of
the window some learner held a turn; verdicts lost and wrong. A second table shows what the
endless kernels did to the room: how long each held its turn against its limit (the runner's
timeout: in the turn the file is compiled and the child warm, so the parent kills it then; +1 s
allowed for the kill), and how long the
others' waits overlapped those turns. The goal line (issue "A room on one GPU"), judged for N = 30:
p95 run-to-verdict of the good checks < 3 s, no verdict lost or wrong, no endless kernel holding
the GPU past its limit. Exit status 1 when a verdict was lost or wrong or a learner died.

Needs only what the GPU child needs (numba-cuda, numpy, greenlet, platformdirs): no textual, no
litellm (each learner reports whether either was imported).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import math
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TRACK = "classic"
KILL_SLACK_S = 1.0  # what killing a hung child and hearing it end may add to its limit
DELAYED_S = 0.1  # an overlap past one poll of the queue (gpulock.POLL_S) counts as a check delayed
GOAL_N = 30
GOAL_P95_S = 3.0
HEAVY = ("textual", "litellm")


# -- the edits ------------------------------------------------------------------------------------
def _kernel_def(tree: ast.Module) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "kernel":
            return node
    raise ValueError("no `def kernel` in the file")


def _last_output_write(kernel: ast.FunctionDef) -> ast.Assign:
    out = kernel.args.args[0].arg
    writes = [n for n in ast.walk(kernel) if isinstance(n, ast.Assign) and len(n.targets) == 1
              and isinstance(n.targets[0], ast.Subscript) and isinstance(n.targets[0].value, ast.Name)
              and n.targets[0].value.id == out and n.lineno == n.end_lineno]
    if not writes:
        raise ValueError(f"no one-line write to {out}[...] in the kernel")
    return max(writes, key=lambda n: n.lineno)


def edit(source: str, mark: int, kind: str = "good") -> str:
    """A fresh edit of a reference: `_room_edit = mark` first in the kernel (new code to compile every
    time). kind "wrong": the last write to the output gets `+ 1`; "endless": that write sits inside
    `while True:` (it never ends on a GPU; the simulator stops it at its time limit)."""
    lines = source.splitlines()
    kernel = _kernel_def(ast.parse(source))
    write = _last_output_write(kernel)
    if kind != "good":
        n = write.lineno - 1
        line = lines[n]
        indent = line[:len(line) - len(line.lstrip())]
        if kind == "wrong":
            target = ast.get_source_segment(source, write.targets[0])
            value = ast.get_source_segment(source, write.value)
            lines[n] = f"{indent}{target} = ({value}) + 1"
        elif kind == "endless":
            # never ends, yet has a way out as Numba sees it (a bare `while True:` that writes a
            # variable set before it trips Numba's liveness analysis: "liveness info missing")
            lines[n:n + 1] = [f"{indent}_room_spin = 0", f"{indent}while _room_spin >= 0:", f"    {line}",
                              f"{indent}    _room_spin = (_room_spin + 1) % 2"]
        else:
            raise ValueError(f"unknown edit {kind!r}")
    first = kernel.body[0]
    if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant):
        first = kernel.body[1] if len(kernel.body) > 1 else first  # after a docstring
    at = first.lineno - 1
    body_line = lines[at]
    indent = body_line[:len(body_line) - len(body_line.lstrip())]
    lines.insert(at, f"{indent}_room_edit = {mark}")
    return "\n".join(lines) + "\n"


def kind_for(learner: int, i: int, wrong_every: int, endless_every: int) -> str:
    """What learner K submits as its i-th check: mostly good edits, on purpose a wrong or endless one."""
    if learner % 10 == 3 and endless_every > 0 and i % endless_every == 2:
        return "endless"
    if learner % 5 == 1 and wrong_every > 0 and i % wrong_every == 1:
        return "wrong"
    return "good"


def right(kind: str, passed: bool | None, kinds: list) -> bool:
    if passed is None:
        return False
    if kind == "good":
        return passed
    if kind == "wrong":
        return not passed and "wrong_output" in kinds
    return not passed and "timeout" in kinds


# -- the queue's turn, timed here (the runner's own last_turn is used where it exists) ------------
class TimedQueue:
    """Wraps the machine's GpuQueue: the same turn, with its wall-clock times recorded (time.time,
    so the parent can line up turns of different learners)."""

    def __init__(self, inner):
        self.inner = inner
        self.last: dict | None = None

    def __getattr__(self, name):
        return getattr(self.inner, name)

    @contextlib.contextmanager
    def turn(self, *args, **kwargs):
        asked = time.time()
        self.last = {"asked": asked}
        with self.inner.turn(*args, **kwargs) as slot:
            got = time.time()
            self.last["got"] = got
            try:
                yield slot
            finally:
                self.last["released"] = time.time()


# -- one learner ----------------------------------------------------------------------------------
def learner(args) -> int:
    from tutor.engine.runner import Runner
    from tutor.puzzles import load_catalog

    folder = Path(os.environ.get("GPU_TUTOR_DATA") or (Path(args.dir) / f"learner-{args.learner}"))
    folder.mkdir(parents=True, exist_ok=True)
    log = open(folder / "records.jsonl", "a", buffering=1)

    def say(**record):
        log.write(json.dumps({"learner": args.learner, "t": time.time(), **record}) + "\n")

    def stop(signum, frame):
        raise SystemExit(3)

    signal.signal(signal.SIGTERM, stop)
    catalog = load_catalog()
    puzzles = [p for p in catalog.ordered() if p.track == TRACK]
    rng = random.Random(args.seed * 1_000_003 + args.learner)
    from tutor.session import Session

    session = Session.from_environment()
    runner = Runner(args.backend, timeout=args.timeout, session=session)
    queue = None
    if args.queue and runner.gpu_queue is None:  # a machine without a GPU tries the queue's path
        from tutor.engine.process.gpulock import shared_queue

        runner.gpu_queue = shared_queue(session.gpu_turns, session.gpu_queue, session.turns_notice)
    if runner.gpu_queue is not None:
        queue = runner.gpu_queue = TimedQueue(runner.gpu_queue)
    try:
        started = time.time()
        runner.start()
        runner.wait_ready()
        if not args.no_warmup:
            one(runner, queue, puzzles[0], edit(puzzles[0].reference, _mark(args.learner, 999_999)), "good",
                say, rng, warmup=True)
        say(event="ready", start_s=time.time() - started, turns=getattr(queue, "turns", 1) if queue else None,
            notice=getattr(queue, "notice", None) if queue else None)
        go = Path(args.dir) / "go"
        while not go.exists():
            time.sleep(0.05)
        t0 = float(go.read_text().strip() or time.time())
        end = t0 + args.duration
        at = t0 + rng.uniform(0, args.period)
        i = 0
        while True:
            now = time.time()
            if at >= end:
                break
            if at > now:
                time.sleep(at - now)
            puzzle = puzzles[(args.learner + i) % len(puzzles)]
            kind = kind_for(args.learner, i, args.wrong_every, args.endless_every)
            source = edit(puzzle.reference, _mark(args.learner, i), kind)
            begun = time.time()
            one(runner, queue, puzzle, source, kind, say, rng, i=i)
            at = max(begun + args.period * rng.uniform(0.5, 1.5), time.time())
            i += 1
        say(event="done", heavy=[m for m in HEAVY if m in sys.modules])
    finally:
        runner.close()
        log.close()
    return 0


def _mark(learner: int, i: int) -> int:
    return 7_000_000 + learner * 1_000_000 + i  # never the same number twice in one room


def one(runner, queue, puzzle, source, kind, say, rng, *, i: int = -1, warmup: bool = False) -> None:
    waits: list = []  # (time, ahead) for every on_wait call
    seed = rng.randrange(2**31)
    say(event="start", i=i, puzzle=puzzle.id, kind=kind, warmup=warmup)
    if queue is not None:
        queue.last = None
    called = time.time()
    error = None
    passed = kinds = device_passed = None
    try:
        result = runner.check(puzzle.id, source, f"learner_{puzzle.id}.py", seed=seed,
                              on_wait=lambda n: waits.append((time.time(), n)), keep_traces=False)
        verdict = result.verdict
        passed, kinds, device_passed = verdict.passed, sorted({f.kind for f in verdict.failures}), verdict.device_passed
    except Exception as e:  # noqa: BLE001 - a lost verdict is what we count
        error = f"{type(e).__name__}: {e}"[:500]
    returned = time.time()
    turn = queue.last if queue is not None else None
    last_turn = getattr(runner, "last_turn", None)
    wait_s = held_s = None
    if isinstance(last_turn, dict) and "waited_s" in last_turn:
        wait_s, held_s = float(last_turn["waited_s"]), float(last_turn.get("held_s") or 0.0)
    elif turn and "got" in turn:
        wait_s, held_s = turn["got"] - turn["asked"], turn.get("released", returned) - turn["got"]
    elif waits:  # neither: from the first "n ahead" to the answer, an upper bound
        wait_s = returned - waits[0][0]
    say(event="check", i=i, puzzle=puzzle.id, kind=kind, warmup=warmup, seed=seed, called=called,
        verdict_s=returned - called, wait_s=wait_s, held_s=held_s, turn=turn,
        last_turn=last_turn if isinstance(last_turn, dict) else None,
        ahead_max=max((n for _, n in waits), default=0), first_wait=waits[0][0] if waits else None,
        passed=passed, device_passed=device_passed, kinds=kinds, error=error,
        right=error is None and right(kind, passed, kinds or []))


# -- the GPU's utilisation --------------------------------------------------------------------------
class GpuSampler:
    """nvidia-smi -lms 500 in the background (pynvml where there is no nvidia-smi); samples are
    (time, gpu index, utilisation %, memory MiB)."""

    def __init__(self, ms: int = 500):
        self.ms = ms
        self.samples: list = []
        self.how = None
        self.note = ""
        self._proc = None
        self._stop = threading.Event()
        self._thread = None

    def start(self) -> None:
        smi = shutil.which("nvidia-smi")
        if smi:
            self.how = "nvidia-smi"
            self._proc = subprocess.Popen([smi, "--query-gpu=index,utilization.gpu,memory.used",
                                           "--format=csv,noheader,nounits", "-lms", str(self.ms)],
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self._thread = threading.Thread(target=self._read_smi, daemon=True)
        else:
            import importlib.util

            if importlib.util.find_spec("pynvml") is None:
                self.note = "no nvidia-smi and no pynvml: GPU utilisation not measured"
                return
            self.how = "pynvml"
            self._thread = threading.Thread(target=self._read_nvml, daemon=True)
        self._thread.start()

    def _read_smi(self) -> None:
        for line in self._proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            try:
                self.samples.append((time.time(), int(parts[0]), float(parts[1]), float(parts[2])))
            except (ValueError, IndexError):
                continue

    def _read_nvml(self) -> None:
        import pynvml

        try:
            pynvml.nvmlInit()
            handles = [pynvml.nvmlDeviceGetHandleByIndex(k) for k in range(pynvml.nvmlDeviceGetCount())]
            while not self._stop.is_set():
                now = time.time()
                for k, h in enumerate(handles):
                    util = pynvml.nvmlDeviceGetUtilizationRates(h).gpu
                    mem = pynvml.nvmlDeviceGetMemoryInfo(h).used / 2**20
                    self.samples.append((now, k, float(util), float(mem)))
                self._stop.wait(self.ms / 1000)
        except Exception as e:  # noqa: BLE001
            self.note = f"pynvml failed: {e}"

    def stop(self) -> None:
        self._stop.set()
        if self._proc is not None:
            self._proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=5)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def between(self, t0: float, t1: float) -> dict | None:
        """Mean and max utilisation and max memory of the busiest GPU over [t0, t1]."""
        inside = [s for s in self.samples if t0 <= s[0] <= t1]
        if not inside:
            return None
        best = None
        for gpu in sorted({s[1] for s in inside}):
            util = [s[2] for s in inside if s[1] == gpu]
            row = {"gpu": gpu, "samples": len(util), "util_mean": statistics.fmean(util), "util_max": max(util),
                   "mem_max_mib": max(s[3] for s in inside if s[1] == gpu)}
            if best is None or row["util_mean"] > best["util_mean"]:
                best = row
        return best


# -- the room ---------------------------------------------------------------------------------------
def room(n: int, args, base: Path, sampler: GpuSampler) -> dict:
    folder = base / f"n{n}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    queue = folder / "queue"
    queue.mkdir()
    procs = []
    begun = time.time()
    for k in range(n):
        data = folder / f"learner-{k}"
        data.mkdir()
        env = dict(os.environ, GPU_TUTOR_DATA=str(data), GPU_TUTOR_GPU_QUEUE=str(queue),
                   PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        if args.turns:
            env["GPU_TUTOR_GPU_TURNS"] = str(args.turns)
        cmd = [sys.executable, str(Path(__file__).resolve()), "--learner", str(k), "--dir", str(folder),
               "--backend", args.backend, "--timeout", str(args.timeout), "--period", str(args.period),
               "--duration", str(args.duration), "--seed", str(args.seed),
               "--wrong-every", str(args.wrong_every), "--endless-every", str(args.endless_every)]
        cmd += ["--no-warmup"] * args.no_warmup + ["--queue"] * args.queue
        stderr = open(data / "stderr.txt", "wb")
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=stderr))
        stderr.close()

    def events(k):
        path = folder / f"learner-{k}" / "records.jsonl"
        if not path.exists():
            return []
        out = []
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
        return out

    # every learner warm (or dead, or too slow) before the room starts
    deadline = time.time() + args.start_limit
    while time.time() < deadline:
        ready = sum(1 for k in range(n) if any(e["event"] == "ready" for e in events(k)))
        dead = sum(1 for p in procs if p.poll() is not None)
        if ready + dead >= n:
            break
        time.sleep(0.2)
    start_s = time.time() - begun
    t0 = time.time() + 0.5
    (folder / "go").write_text(repr(t0))
    # a check started just before the end may wait for the whole queue and then take its limit
    from tutor.engine.runner import COLD_START_GRACE, GRACE

    drain = args.timeout + GRACE + COLD_START_GRACE + 30 + n * 2
    for p in procs:
        left = t0 + args.duration + drain - time.time()
        try:
            p.wait(timeout=max(left, 1))
        except subprocess.TimeoutExpired:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    t1 = time.time()
    learners, records = [], []
    for k, p in enumerate(procs):
        ev = events(k)
        ready = next((e for e in ev if e["event"] == "ready"), None)
        done = next((e for e in ev if e["event"] == "done"), None)
        checks = {(e["i"], e["warmup"]): e for e in ev if e["event"] == "check"}
        for e in ev:
            if e["event"] == "start" and (e["i"], e["warmup"]) not in checks:  # died or was killed mid-check
                records.append({"learner": k, "i": e["i"], "puzzle": e["puzzle"], "kind": e["kind"],
                                "warmup": e["warmup"], "lost": True, "error": "the learner ended before the verdict",
                                "right": False, "passed": None, "kinds": None, "verdict_s": None, "wait_s": None})
        for e in checks.values():
            e["lost"] = e["error"] is not None or e["passed"] is None
            records.append(e)
        tail = ""
        with contextlib.suppress(OSError):
            tail = (folder / f"learner-{k}" / "stderr.txt").read_text(errors="replace")[-600:]
        learners.append({"learner": k, "rc": p.returncode, "ready": ready is not None, "done": done is not None,
                         "start_s": ready and ready["start_s"], "heavy": done and done["heavy"],
                         "turns": ready and ready.get("turns"), "notice": ready and ready.get("notice"),
                         "stderr_tail": tail if (p.returncode or not done) else ""})
    records.sort(key=lambda r: (r.get("called") or 0, r["learner"]))
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    summary = summarise(n, args, records, learners, sampler.between(t0, t1) if sampler.how else None, t0, t1)
    summary["start_s"] = start_s
    return {"n": n, "summary": summary, "learners": learners, "records": records,
            "gpu_samples": [s for s in sampler.samples if t0 <= s[0] <= t1]}


def quantiles(values: list) -> tuple | None:
    """(median, p95, max), p95 by nearest rank."""
    if not values:
        return None
    values = sorted(values)
    return statistics.median(values), values[max(0, math.ceil(0.95 * len(values)) - 1)], values[-1]


def _union_s(intervals: list, t0: float, t1: float) -> float:
    total, end = 0.0, t0
    for a, b in sorted((max(a, t0), min(b, t1)) for a, b in intervals):
        if b <= max(a, end):
            continue
        total += b - max(a, end)
        end = b
    return total


def summarise(n, args, records, learners, gpu, t0, t1) -> dict:
    measured = [r for r in records if not r.get("warmup")]
    done = [r for r in measured if not r["lost"]]
    good = [r for r in done if r["kind"] == "good"]
    waits = [r["wait_s"] for r in done if r.get("wait_s") is not None]
    turns = [r["turn"] for r in done if r.get("turn") and "got" in r["turn"]]
    held = _union_s([(t["got"], t.get("released", t["got"])) for t in turns], t0, t1) / max(t1 - t0, 1e-9) \
        if turns else None
    # the endless kernels: how long each held its turn, and how long others' waits overlapped it
    limit = args.timeout  # the runner's limit for a warm, compiled child in its turn
    endless = []
    for r in done:
        if r["kind"] != "endless":
            continue
        t = r.get("turn") or {}
        row = {"learner": r["learner"], "i": r["i"], "verdict_s": r["verdict_s"], "held_s": r.get("held_s"),
               "right": r["right"], "others_overlap_s": None, "others_wait_max_s": None}
        if "got" in t and "released" in t:
            overlaps, waits_during = [], []
            for o in done:
                ot = o.get("turn") or {}
                if o is r or "got" not in ot:
                    continue
                lap = min(ot["got"], t["released"]) - max(ot["asked"], t["got"])
                if lap > 0:
                    overlaps.append(lap)
                    waits_during.append(ot["got"] - ot["asked"])
            row["others_overlap_s"] = max(overlaps, default=0.0)
            row["others_wait_max_s"] = max(waits_during, default=0.0)
            row["others_delayed"] = sum(1 for lap in overlaps if lap > DELAYED_S)
        endless.append(row)
    lost = sum(1 for r in measured if r["lost"]) + sum(1 for r in records if r.get("warmup") and r["lost"])
    wrong = sum(1 for r in done if not r["right"])
    died = [x["learner"] for x in learners if x["rc"] != 0 or not x["done"]]
    heavy = sorted({m for x in learners for m in (x["heavy"] or [])})
    by_kind = {k: sum(1 for r in measured if r["kind"] == k) for k in ("good", "wrong", "endless")}
    detected = {k: sum(1 for r in done if r["kind"] == k and r["right"]) for k in ("good", "wrong", "endless")}
    held_max = max((e["held_s"] for e in endless if e["held_s"] is not None), default=None)
    overlap_max = max((e["others_overlap_s"] for e in endless if e["others_overlap_s"] is not None), default=None)
    good_q = quantiles([r["verdict_s"] for r in good])
    endless_ok = all(e["held_s"] is None or e["held_s"] <= limit + KILL_SLACK_S for e in endless) and \
        all(e["others_overlap_s"] is None or e["others_overlap_s"] <= limit + KILL_SLACK_S for e in endless)
    return {
        "n": n, "window_s": t1 - t0, "checks": len(measured), "by_kind": by_kind, "detected": detected,
        "wait": quantiles(waits), "verdict_all": quantiles([r["verdict_s"] for r in done]),
        "verdict_good": good_q, "gpu": gpu, "held_share": held, "lost": lost, "wrong": wrong,
        "turns": sorted({x["turns"] for x in learners if x["turns"] is not None}),
        "notices": sorted({x["notice"] for x in learners if x["notice"]}),
        "died": died, "not_ready": [x["learner"] for x in learners if not x["ready"]], "heavy": heavy,
        "endless": endless, "endless_limit_s": limit, "endless_held_max_s": held_max,
        "endless_overlap_max_s": overlap_max,
        "goal": {"p95_ok": good_q is not None and good_q[1] < GOAL_P95_S, "lost_ok": lost == 0 and not died,
                 "wrong_ok": wrong == 0, "endless_ok": endless_ok},
    }


# -- printing ---------------------------------------------------------------------------------------
def _q(q) -> str:
    return " / ".join(f"{x:.2f}" for x in q) if q else "-"


def table_header() -> str:
    return ("| N | checks (good/wrong/endless) | turn wait s (med / p95 / max) | run-to-verdict s, all "
            "(med / p95 / max) | run-to-verdict s, good (med / p95 / max) | GPU util % (mean / max) | "
            "GPU mem MiB max | turn held | lost | wrong |\n"
            "|---|---|---|---|---|---|---|---|---|---|")


def table_row(s: dict) -> str:
    k = s["by_kind"]
    gpu = s["gpu"]
    util = f"{gpu['util_mean']:.0f} / {gpu['util_max']:.0f}" if gpu else "-"
    mem = f"{gpu['mem_max_mib']:.0f}" if gpu else "-"
    held = f"{100 * s['held_share']:.0f}%" if s["held_share"] is not None else "-"
    wait = _q(s["wait"]) if s["wait"] else "- (no queue)"
    return (f"| {s['n']} | {s['checks']} ({k['good']}/{k['wrong']}/{k['endless']}) | {wait} | "
            f"{_q(s['verdict_all'])} | {_q(s['verdict_good'])} | {util} | {mem} | {held} | {s['lost']} | "
            f"{s['wrong']} |")


def endless_line(s: dict) -> str:
    if not s["endless"]:
        return f"| {s['n']} | 0 | - | - | - | - |"
    d = s["detected"]
    held, lap = s["endless_held_max_s"], s["endless_overlap_max_s"]
    delayed = sum(e.get("others_delayed", 0) for e in s["endless"])
    queue = held is not None
    return (f"| {s['n']} | {len(s['endless'])} ({d['endless']} stopped as timeout) | "
            f"{max(e['verdict_s'] for e in s['endless']):.2f} | "
            f"{f'{held:.2f}' if queue else '- (no queue)'} / {s['endless_limit_s']:g} | "
            f"{f'{lap:.2f}' if queue and lap is not None else '-'} | {delayed if queue else '-'} |")


def goal_line(s: dict) -> str:
    g = s["goal"]
    q = s["verdict_good"]
    p95 = f"{q[1]:.2f} s" if q else "-"
    parts = [f"p95 run-to-verdict of good checks {p95} (< {GOAL_P95_S:g} s: {'met' if g['p95_ok'] else 'NOT met'})",
             f"lost {s['lost']}{', learners died: ' + str(s['died']) if s['died'] else ''} "
             f"({'met' if g['lost_ok'] else 'NOT met'})",
             f"wrong {s['wrong']} ({'met' if g['wrong_ok'] else 'NOT met'})"]
    if s["endless"]:
        held, lap = s["endless_held_max_s"], s["endless_overlap_max_s"]
        parts.append(f"endless turns held max {'-' if held is None else f'{held:.2f} s'}, others delayed max "
                     f"{'-' if lap is None else f'{lap:.2f} s'} "
                     f"(<= limit {s['endless_limit_s']:.0f} s + {KILL_SLACK_S:g} s: "
                     f"{'met' if g['endless_ok'] else 'NOT met'})")
    ok = all(g.values())
    return f"goal N={s['n']}: {'MET' if ok else 'NOT MET'}: " + "; ".join(parts)


def _turns_note(turns: int | None) -> str:
    from tutor.engine.process import gpulock

    name = getattr(gpulock, "TURNS_ENV", None)
    if turns:
        return f"GPU_TUTOR_GPU_TURNS={turns}" + ("" if name else " (this gpulock does not read it: one turn at a time)")
    default = getattr(gpulock, "DEFAULT_TURNS", 1)
    return "GPU turns: gpulock's default" + (f", {default} ({name} unset)" if name else " (one at a time)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="1,10,30", help="room sizes, one after another (default 1,10,30)")
    ap.add_argument("--backend", default="gpu", choices=("gpu", "sim", "numba-sim"))
    ap.add_argument("--duration", type=float, default=120.0, help="seconds of checking per room (default 120)")
    ap.add_argument("--period", type=float, default=3.0, help="seconds between a learner's checks, jittered 0.5-1.5x")
    ap.add_argument("--timeout", type=float, default=5.0, help="the runner's time limit per check (default 5)")
    ap.add_argument("--turns", type=int, default=None, help="GPU turns at once (GPU_TUTOR_GPU_TURNS)")
    ap.add_argument("--wrong-every", type=int, default=4, help="learners K%%5==1: a wrong kernel every this many checks")
    ap.add_argument("--endless-every", type=int, default=10, help="learners K%%10==3: an endless kernel every this many")
    ap.add_argument("--start-limit", type=float, default=120.0, help="seconds to wait for every learner to be warm")
    ap.add_argument("--no-warmup", action="store_true", help="no warm-up check before the room starts")
    ap.add_argument("--queue", action="store_true",
                    help="queue for the GPU on a backend that does not (numba-sim: the queue's path without a GPU)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write every record and summary here")
    ap.add_argument("--dir", help="folder for the learners' data and the queue (default: a fresh temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep the learners' folders")
    ap.add_argument("--learner", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.learner is not None:
        return learner(args)

    sizes = [int(x) for x in args.n.split(",") if x.strip()]
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="gpu-tutor-room-"))
    base.mkdir(parents=True, exist_ok=True)
    sampler = GpuSampler()
    if args.backend == "gpu":
        sampler.start()
    print(f"room: backend {args.backend}, N = {', '.join(map(str, sizes))}, {args.duration:g} s each, a check every "
          f"{args.period:g} s (0.5-1.5x), timeout {args.timeout:g} s, {_turns_note(args.turns)}; "
          f"GPU sampled by {sampler.how or 'nothing'}{': ' + sampler.note if sampler.note else ''}", flush=True)
    runs = []

    def write_json():
        if args.json:
            Path(args.json).write_text(json.dumps({"args": vars(args), "runs": runs}, indent=1, default=str))

    print(table_header(), flush=True)
    try:
        for n in sizes:
            run = room(n, args, base, sampler)
            runs.append(run)
            write_json()  # after every room: a run cut short keeps the rooms it finished
            s = run["summary"]
            turns = f", {'/'.join(map(str, s['turns']))} GPU turn(s) at once" if s["turns"] else ""
            print(table_row(s) + f"  <- {len(run['learners'])} learner(s) warm in {s['start_s']:.1f} s, "
                  f"then {s['window_s']:.0f} s of checks{turns}", flush=True)
    finally:
        sampler.stop()
        if not args.dir and not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print()
    print(table_header())
    for run in runs:
        print(table_row(run["summary"]))
    print()
    print(f"endless kernels (limit = the runner's timeout {args.timeout:g} s, when it kills the child in its turn; "
          "others delayed = the longest overlap of another check's wait with an endless kernel's turn)")
    print("| N | endless checks | run-to-verdict max s | turn held max / limit s | others delayed max s | "
          "checks delayed > 0.1 s |\n|---|---|---|---|---|---|")
    for run in runs:
        print(endless_line(run["summary"]))
    print()
    bad = False
    for run in runs:
        s = run["summary"]
        print(goal_line(s) + ("  <- the issue's goal" if s["n"] == GOAL_N else ""))
        if s["not_ready"]:
            print(f"  N={s['n']}: learners not warm within --start-limit: {s['not_ready']}")
        for notice in s["notices"]:
            print(f"  N={s['n']}: the queue said: {notice}")
        if s["heavy"]:
            print(f"  N={s['n']}: a learner imported {', '.join(s['heavy'])} (the GPU server has neither)")
        for x in run["learners"]:
            if x["stderr_tail"]:
                print(f"  learner {x['learner']} (rc {x['rc']}): {x['stderr_tail'].strip()[-300:]}")
        bad |= bool(s["lost"] or s["wrong"] or s["died"])
    if args.json:
        print(f"records: {args.json}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
