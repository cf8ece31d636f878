"""The AI coach's optimiser: a model proposes, the verifier judges, the judgement goes back.

A target is a coaching task (kernels/, judged by `verify`) or a solved puzzle (judged by the puzzle
checker). Each round asks the model for one complete module (or several samples), extracts it,
judges it in a child process, and turns the verdict into feedback for the next prompt. The loop
stops at the first budget spent (rounds, wall time, tokens, money), on the target score, or when
cancelled. Only verified candidates can become "best"; every attempt is appended to a JSONL log
from which a session can be replayed or resumed.

Scores: on a GPU, the verified speedup over the baseline timed in the same process; on the
simulator (no timing), the ratio of global memory moved by the baseline to the candidate's, at
the largest shape, labelled as such.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

SYSTEM = """You are an expert CUDA performance engineer writing Numba-CUDA (Python, `from numba import cuda`).
You make a given kernel faster without changing what it computes. Reply with exactly one complete \
Python module in one ```python block, then a section headed "Why it is faster" of at most 120 words. \
Every claim you make is checked by a verifier that runs your code on hidden inputs; code that cheats \
(caches, host-side maths, reading outputs from earlier runs, skipping work for some shapes) is rejected."""

TASK_RULES = """The candidate contract: a module with its @cuda.jit kernels and one host function \
`launch(out, *inputs)` that receives device arrays (shapes via .shape), computes launch sizes, may \
allocate device scratch arrays with cuda.device_array and launches kernels; it returns nothing. \
Only numba, math and numpy (for dtypes) may be imported. No try/except, no host copies, no numpy \
maths in launch, no streams, no float16, no module state written at run time. The output arrives \
filled with NaN; every element must be written. Inputs must not be modified."""

SCORE_LABEL = {"speedup": "speedup (GPU, verified)", "traffic": "global-memory traffic ratio (simulator)"}


@dataclass
class Budget:
    rounds: int = 10
    wall_s: float = 15 * 60.0
    tokens: int | None = None
    cost_usd: float | None = None
    target: float | None = None     # stop once the best score reaches this
    samples: int = 1                # candidates asked for per round


@dataclass
class Judgement:
    correct: bool
    compiled: bool
    failures: list
    score: float | None = None       # higher is better; None when not measurable
    score_kind: str | None = None    # "speedup" or "traffic"
    timing: dict | None = None
    flags: list = field(default_factory=list)


@dataclass
class Attempt:
    round: int
    sample: int
    model: str
    prompt_hash: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    latency_s: float
    code_hash: str | None
    code: str | None
    correct: bool
    compiled: bool
    failures: list
    score: float | None
    score_kind: str | None
    timing: dict | None
    flags: list
    explanation: str
    error: str | None = None          # the model call failed (no candidate)
    at_s: float | None = None         # seconds from the session's start to this verdict

    @property
    def trusted(self) -> bool:
        return self.correct and not self.flags


@dataclass
class OptimiseResult:
    target: str
    backend: str
    attempts: list[Attempt]
    best: Attempt | None
    stop_reason: str
    start_code: str
    elapsed_s: float
    baseline: Judgement | None = None

    def diff(self) -> str:
        if self.best is None:
            return ""
        return "".join(difflib.unified_diff(self.start_code.splitlines(True), self.best.code.splitlines(True),
                                            "yours.py", "optimised.py"))

    def totals(self) -> dict:
        return {"rounds": max((a.round for a in self.attempts), default=0),
                "prompt_tokens": sum(a.prompt_tokens or 0 for a in self.attempts),
                "completion_tokens": sum(a.completion_tokens or 0 for a in self.attempts),
                "cost_usd": sum(a.cost_usd or 0 for a in self.attempts)}

    def to_json(self) -> dict:
        return {"target": self.target, "backend": self.backend, "stop_reason": self.stop_reason,
                "elapsed_s": self.elapsed_s, "totals": self.totals(),
                "best": asdict(self.best) if self.best else None,
                "baseline": asdict(self.baseline) if self.baseline else None,
                "attempts": [asdict(a) for a in self.attempts]}


# -- targets --------------------------------------------------------------------------------------
class TaskTarget:
    """A coaching task under kernels/: judged by the anti-cheat verifier."""

    kind = "task"

    def __init__(self, name: str, backend: str = "sim", timeout: float = 300.0):
        from .tasks import load_task

        self.task = load_task(name)
        self.name = name
        self.backend = backend
        self.timeout = timeout
        self._baseline_bytes = None

    def describe(self) -> str:
        t = self.task
        return f"# Task: {t.title}\n{t.statement.strip()}\n\n{TASK_RULES}"

    def baseline_source(self) -> str:
        return self.task.source("naive")

    def judge(self, source: str) -> Judgement:
        from .verify import verify

        verdict = verify(self.name, source, self.backend, timeout=self.timeout)
        failures = [f.to_json() for f in verdict.failures]
        compiled = not any(f["kind"] in ("compile_error", "static") for f in failures)
        j = Judgement(verdict.passed, compiled, failures, timing=verdict.timing, flags=list(verdict.flags))
        if j.correct and self.backend == "gpu" and j.timing:
            j.score, j.score_kind = float(j.timing["speedup"]), "speedup"
        elif j.correct and verdict.global_bytes:
            mine = _largest_bytes(verdict.global_bytes)
            base = self._naive_bytes()
            if mine and base:
                j.score, j.score_kind = base / mine, "traffic"
        return j

    def _naive_bytes(self):
        if self._baseline_bytes is None:
            from .verify import verify

            verdict = verify(self.name, self.task.source("naive"), "sim", timeout=self.timeout)
            self._baseline_bytes = _largest_bytes(verdict.global_bytes) or 0
        return self._baseline_bytes


def _largest_bytes(records) -> int | None:
    if not records:
        return None
    best = max(records, key=lambda r: (math.prod(r["shape"]), r["bytes"]))
    return best["bytes"]


class PuzzleTarget:
    """A solved puzzle: the candidate keeps the puzzle's kernel signature and launch; the puzzle
    checker judges it (every config, races, budgets); on a GPU its kernel times are compared with
    the learner's own, measured in the same child."""

    kind = "puzzle"

    def __init__(self, puzzle, start_source: str, backend: str = "sim", timeout: float = 30.0):
        self.puzzle = puzzle
        self.name = puzzle.id
        self.backend = backend
        self.start_source = start_source
        self.timeout = timeout
        self._runner = None
        self._start_ms = None
        self._start_checked = False

    def describe(self) -> str:
        p = self.puzzle
        configs = "; ".join(f"{c.name}: blocks {tuple(c.blocks)}, threads {tuple(c.threads)}" for c in p.configs)
        return (f"# Puzzle: {p.title}\n{p.summary}\n\n{p.lesson.strip()}\n\nThe module must define "
                f"`kernel({', '.join(p.signature)})` decorated with @cuda.jit; the launch is fixed by the "
                f"puzzle ({configs}) plus random configs of the same shape. Budgets per thread: "
                f"{p.budget or 'none'}. Constants: {p.constants or 'none'}.")

    def baseline_source(self) -> str:
        return self.start_source

    def _check(self, source):
        from ..engine.runner import Runner

        if self._runner is None:
            self._runner = Runner(self.backend, timeout=self.timeout)
        return self._runner.check(self.name, source, "candidate.py", keep_traces=False, untrusted=True).verdict

    def check_start(self):
        """The starting kernel's verdict (it must pass: a solved puzzle), run once; its kernel time
        is the baseline every candidate is compared with."""
        verdict = self._check(self.start_source)
        self._start_ms = _kernel_ms(verdict)
        self._start_checked = True
        return verdict

    def judge(self, source: str) -> Judgement:
        rejected = screen_failures(source)
        if rejected:  # model-written: nothing of it runs unless the module grammar allows it
            return Judgement(False, False, rejected)
        verdict = self._check(source)
        failures = [f.to_json() for f in verdict.failures]
        compiled = not any(f["kind"] in ("compile_error", "syntax_error", "unsupported") for f in failures)
        j = Judgement(verdict.passed, compiled, failures)
        ms = _kernel_ms(verdict)
        if verdict.passed and ms:
            if not self._start_checked:
                self.check_start()
            j.timing = {"ms": ms, "baseline_ms": self._start_ms or ms}
            j.score, j.score_kind = j.timing["baseline_ms"] / ms, "speedup"
        return j

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()


def screen_failures(source: str) -> list[dict]:
    """The static screen's findings on a puzzle candidate, as the failures a verdict carries (kind
    "static", like the task verifier's), so the feedback names the rule and the line."""
    from ..engine.verdict import Failure
    from .screen import screen_puzzle_module

    return [Failure(kind="static", rule=f.rule, line=f.line, message=f"{f.message} {f.fix}".strip()).to_json()
            for f in screen_puzzle_module(source, "candidate.py")]


def _kernel_ms(verdict) -> float | None:
    times = [c.kernel_ms for c in verdict.configs if c.kernel_ms]
    return sum(times) if times else None


# -- the loop -------------------------------------------------------------------------------------
_BLOCK = re.compile(r"```(?:python|py)?[^\n]*\n(.*?)```", re.S)


def extract_candidate(reply: str, kind: str) -> tuple[str | None, str]:
    """(module source, explanation): the last fenced block that looks like a whole module."""
    blocks = _BLOCK.findall(reply)
    need = "def launch" if kind == "task" else "def kernel"
    module = next((b for b in reversed(blocks) if need in b), None)
    if module is None and blocks:
        module = blocks[-1]
    explanation = ""
    m = re.search(r"why it is faster[:*#\s]*(.*)", reply, re.I | re.S)
    if m:
        explanation = _BLOCK.sub("", m.group(1)).strip()
    elif module is not None:
        explanation = _BLOCK.sub("", reply).strip()
    return module, explanation[:2000]


def feedback_for(attempt: Attempt, best: Attempt | None, kind: str) -> str:
    """What the verifier found, for the next prompt: the failure, where, by how much."""
    head = f"Round {attempt.round}" + (f" sample {attempt.sample}" if attempt.sample else "")
    if attempt.error:
        return f"{head}: the model call failed ({attempt.error})."
    if attempt.code is None:
        need = "`launch(out, *inputs)`" if kind == "task" else "`kernel(...)`"
        return f"{head}: no ```python block with a complete module defining {need} was found in your reply."
    if not attempt.correct:
        lines = [f"{head}: REJECTED by the verifier."]
        seen = set()
        for f in attempt.failures:
            key = (f.get("kind"), f.get("rule"))
            if key in seen:
                continue
            seen.add(key)
            where = f" on shape {tuple(f['shape'])}" if f.get("shape") else ""
            where += f" (config {f['config']})" if f.get("config") else ""
            err = f"; max error {f['max_error']:.3g}" if f.get("max_error") is not None else ""
            rule = f"/{f['rule']}" if f.get("rule") else ""
            lines.append(f"- {f.get('kind')}{rule}{where}: {_trim(f.get('message', ''))}{err}")
            if len(seen) >= 5:
                break
        return "\n".join(lines)
    text = f"{head}: CORRECT."
    if attempt.score is not None:
        text += f" {SCORE_LABEL[attempt.score_kind]}: {attempt.score:.2f}x"
    if attempt.timing and "ms" in attempt.timing:
        text += f" ({attempt.timing['ms']:.4f} ms vs baseline {attempt.timing.get('baseline_ms', 0):.4f} ms)"
    for flag in attempt.flags:
        text += f"\n- flagged: {flag}"
    if best is not None and best is not attempt and best.score is not None:
        text += f"\nBest so far: round {best.round}, {best.score:.2f}x. Beat it."
    return text


def _trim(message: str, limit: int = 400) -> str:
    message = " ".join(message.split())
    return message if len(message) <= limit else message[:limit] + " ..."


def save_new(path: Path, text: str) -> Path:
    """Write a candidate beside the learner's work under a name nothing has yet (`x-2.py`, ...):
    accepting a candidate never overwrites a file."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    path.parent.mkdir(parents=True, exist_ok=True)
    candidate.write_text(text, encoding="utf-8")
    return candidate


def device_text(backend: str) -> str:
    if backend != "gpu":
        return ("Judged on gpu-tutor's CPU simulator: correctness, races and global memory moved per launch; "
                "no timing. Fewer bytes moved from global memory scores higher.")
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10).stdout.strip().splitlines()
        return f"Judged and timed on an NVIDIA GPU: {out[0]}." if out else "Judged and timed on a CUDA GPU."
    except (OSError, subprocess.SubprocessError):
        return "Judged and timed on a CUDA GPU."


class OptimiseLog:
    """JSONL: a start record, one record per attempt, an end record. Code is kept so a session can
    be replayed or resumed; keys never are."""

    def __init__(self, path: Path | None):
        self.path = path

    def write(self, record: dict) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **record}) + "\n")


def read_log(path: Path) -> tuple[dict | None, list[Attempt]]:
    """The start record and every attempt of a log (bad lines are skipped, never fatal)."""
    start, attempts = None, []
    names = set(Attempt.__dataclass_fields__)
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec.get("event") == "start" and start is None:
            start = rec
        elif rec.get("event") == "attempt":
            try:
                attempts.append(Attempt(**{k: v for k, v in rec.items() if k in names}))
            except TypeError:
                continue
    return start, attempts


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def better(a: Attempt, b: Attempt | None) -> bool:
    """Is a a better verified candidate than b? Trusted (unflagged) beats flagged; then score."""
    if not a.correct:
        return False
    if b is None:
        return True
    if a.trusted != b.trusted:
        return a.trusted
    return (a.score or 0.0) > (b.score or 0.0)


def optimise(target, start_code: str, settings, budget: Budget, *, log_path: Path | None = None,
             resume: list[Attempt] | None = None, cancel: threading.Event | None = None,
             on_event: Callable[[str, object], None] = lambda kind, data: None) -> OptimiseResult:
    """Run the loop. Events: ("round", n), ("delta", text), ("attempt", Attempt), ("status", text)."""
    from ..ai.llm import AIError, Cancelled, ChatStream

    cancel = cancel or threading.Event()
    log = OptimiseLog(log_path)
    attempts: list[Attempt] = list(resume or [])
    best = None
    for a in attempts:
        if better(a, best):
            best = a
    started = time.monotonic()
    if not resume:
        log.write({"event": "start", "target": target.name, "kind": target.kind, "backend": target.backend,
                   "model": settings.model, "budget": asdict(budget), "start_code": start_code,
                   "start_code_hash": _hash(start_code)})
    device = device_text(target.backend)
    feedback = [feedback_for(a, best, target.kind) for a in attempts[-3:]]
    round_no = max((a.round for a in attempts), default=0)
    stop = None
    while stop is None:
        stop = _spent(budget, attempts, round_no, started, best, cancel)
        if stop:
            break
        round_no += 1
        on_event("round", round_no)
        messages = _messages(target, start_code, device, feedback, best)
        prompt_hash = _hash(json.dumps(messages))
        this_round = []
        for sample in range(budget.samples):
            if cancel.is_set():
                stop = "cancelled"
                break
            stream = None
            try:
                stream = ChatStream(settings, messages, cancel=cancel, max_tokens=max(settings.max_tokens, 4000))
                for delta in stream:
                    on_event("delta", delta)
                reply, error = stream.text, None
            except Cancelled:
                stop = "cancelled"
                break
            except AIError as e:
                reply, error = "", e.message
            usage = stream.usage if stream is not None else None
            code, explanation = extract_candidate(reply, target.kind) if not error else (None, "")
            judgement = None
            if code is not None:
                on_event("status", f"round {round_no}: verifying on {target.backend} ...")
                judgement = target.judge(code)
            attempt = Attempt(
                round=round_no, sample=sample + 1 if budget.samples > 1 else 0, model=settings.model,
                prompt_hash=prompt_hash,
                prompt_tokens=usage.prompt_tokens if usage else None,
                completion_tokens=usage.completion_tokens if usage else None,
                cost_usd=usage.cost_usd if usage else None, latency_s=usage.latency_s if usage else 0.0,
                code_hash=_hash(code) if code else None, code=code,
                correct=bool(judgement and judgement.correct), compiled=bool(judgement and judgement.compiled),
                failures=judgement.failures if judgement else [], score=judgement.score if judgement else None,
                score_kind=judgement.score_kind if judgement else None,
                timing=judgement.timing if judgement else None, flags=judgement.flags if judgement else [],
                explanation=explanation, error=error, at_s=round(time.monotonic() - started, 3))
            attempts.append(attempt)
            this_round.append(attempt)
            if better(attempt, best):
                best = attempt
            log.write({"event": "attempt", **asdict(attempt)})
            on_event("attempt", attempt)
            if error and ("key" in error or "not a litellm model" in error):
                stop = "model_error"  # the same call will fail the same way: do not spend the budget
                break
        feedback = [feedback_for(a, best, target.kind) for a in this_round] or feedback
    result = OptimiseResult(target.name, target.backend, attempts, best, stop, start_code,
                            time.monotonic() - started)
    log.write({"event": "end", "stop_reason": stop, "best_round": best.round if best else None,
               "best_score": best.score if best else None, **result.totals()})
    return result


def _spent(budget: Budget, attempts, round_no, started, best, cancel) -> str | None:
    if cancel.is_set():
        return "cancelled"
    if budget.target is not None and best is not None and best.trusted and (best.score or 0) >= budget.target:
        return "target"
    if round_no >= budget.rounds:
        return "rounds"
    if time.monotonic() - started >= budget.wall_s:
        return "time"
    if budget.tokens is not None and sum((a.prompt_tokens or 0) + (a.completion_tokens or 0)
                                         for a in attempts) >= budget.tokens:
        return "tokens"
    if budget.cost_usd is not None and sum(a.cost_usd or 0 for a in attempts) >= budget.cost_usd:
        return "money"
    return None


def _messages(target, start_code, device, feedback, best) -> list[dict]:
    user = [target.describe(), "", f"## Device\n{device}", "", "## The starting kernel", "```python",
            start_code.rstrip(), "```"]
    if best is not None and best.code and best.code != start_code:
        user += ["", f"## Your best verified kernel so far (round {best.round})", "```python", best.code.rstrip(),
                 "```"]
    if feedback:
        user += ["", "## What the verifier said about your last attempt(s)", *feedback]
    user += ["", "Write a faster, still correct module. One ```python block, then \"Why it is faster\"."]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(user)}]


def parse_duration(text: str) -> float:
    """'15m', '90s', '1h', '2.5' (minutes) -> seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if not m:
        raise ValueError(f"{text!r} is not a duration: write 15m, 90s or 1h")
    value, unit = float(m.group(1)), m.group(2) or "m"
    return value * {"s": 1, "m": 60, "h": 3600}[unit]
