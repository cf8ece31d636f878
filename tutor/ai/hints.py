"""An AI hint written for the learner's code and failure, that never hands over the answer.

The flow, shared by the app and `gpu-tutor hint`: build the context (the puzzle's goal and rules,
never the reference; the learner's code; the latest verdict; the failing thread's accesses; the
hints the learner has seen), receive the model's whole reply, judge it with the leak guard, and
only then show it. Nothing of a reply reaches the learner before the guard has judged it: code
can hide in any markup (an indented block, a `~~~` fence, a prose line), so no part of a reply
can be shown early as safe prose; while it arrives the learner sees how much has come. When it
gives too much away the model is asked again (at most twice), shown its own withheld reply and
every reason; whenever the model cannot be used the authored hint for the level stands in.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .leakguard import Leak, LeakGuard
from .llm import AIError, Cancelled, ChatStream, Usage

LEVELS = {
    1: ("a nudge", "One or two sentences ending in a question that points at the problem in their code. "
                   "No code at all."),
    2: ("the idea", "Name the concept they are missing and say where in their code it applies (cite line "
                    "numbers). At most one short line of code, and only to illustrate the concept, never "
                    "a line of the solution."),
    3: ("near-pseudocode", "Plain-language steps, one per line, close to pseudocode but not Python: the "
                           "learner must still write every line of code."),
    4: ("full solution", "The learner asked twice and their facilitator allows it: give a complete, "
                         "working kernel in one ```python block, then explain each line."),
}
MAX_RETRIES = 2       # re-asks after a withheld hint, then the authored hint
MAX_TRACE_LINES = 40  # of the failing thread's accesses

SYSTEM = """You are gpu-tutor's coach for a learner writing a Numba-CUDA kernel (Python, `from numba import cuda`).
You write ONE hint at the level asked for. Teach; never hand over the answer: no full solution, no \
line of code the learner could paste to pass, unless the level says otherwise. Refer to the learner's \
own lines by number and to the failure the checker reported (which block, thread and index). \
Be concrete and kind; at most 120 words; Markdown."""


@dataclass
class HintOutcome:
    level: int
    text: str                    # Markdown, shown whole
    source: str                  # "ai" or "authored"
    note: str | None = None      # one line: why the authored hint is shown, what was withheld
    usage: Usage = field(default_factory=Usage)
    leaks: int = 0               # replies withheld by the guard
    attempts: int = 0
    cancelled: bool = False


def level_name(level: int) -> str:
    return LEVELS.get(level, ("more", ""))[0]


def authored_hint(puzzle, level: int) -> str | None:
    hints = list(puzzle.hints)
    return hints[level - 1] if 1 <= level <= len(hints) else None


def failure_context(result) -> str:
    """The latest verdict as text, then what the first failing thread did, access by access."""
    if result is None:
        return "The learner has not run their kernel yet."
    from ..engine.views.textview import verdict_text

    parts = [verdict_text(result.verdict)]
    run = next((r for r in getattr(result, "runs", []) or [] if r.trace is not None and r.failures), None)
    if run is not None:
        from ..engine.views.gridmodel import GridModel

        model = GridModel(run)
        tid = model.default_thread()
        block, thread = model.where(tid)
        events = model.events_of(tid)
        lines = [e.text() for e in events[:MAX_TRACE_LINES]]
        if len(events) > MAX_TRACE_LINES:
            lines.append(f"... {len(events) - MAX_TRACE_LINES} more accesses")
        parts.append(f"Trace of block {block}, thread {thread} in config {model.config_name!r} "
                     f"(status: {model.status(tid)}):\n" + ("\n".join(lines) or "(no memory accesses)"))
    from ..engine.analysis.counters import verdict_advice

    costly = verdict_advice(result.verdict, [])
    if costly:
        parts.append("Memory counters of the largest config (the simulator's trace, counted as Nsight Compute "
                     "counts them):\n" + "\n".join(f"- {c}" for c in costly))
    return "\n\n".join(parts)


def build_messages(puzzle, level: int, learner: str, context: str, shown: list[str],
                   withheld: list[tuple[str, Leak]] = ()) -> list[dict]:
    """`shown`: the hints the learner has seen, AI-written ones included. `withheld`: the model's
    earlier replies that the guard held back, each with its Leak, so that the model sees what it
    wrote and every reason, not a paraphrase."""
    numbered = "\n".join(f"{n:3} | {line}" for n, line in enumerate(learner.splitlines(), 1))
    name, how = LEVELS[level]
    budget = ", ".join(f"{k} {v}" for k, v in (puzzle.budget or {}).items())
    user = [f"# Puzzle: {puzzle.title}", puzzle.summary, "", "## The lesson (goal and rules)", puzzle.lesson.strip(),
            "", f"Kernel signature: kernel({', '.join(puzzle.signature)})"]
    if puzzle.constants:
        user.append(f"Constants: {puzzle.constants}")
    if budget:
        user.append(f"Budgets per thread: {budget}")
    user += ["", "## The learner's code", "```python", numbered, "```", "", "## What the checker said", context]
    if shown:
        user += ["", "## Hints already shown (do not repeat them; go one step further)"]
        user += [f"- {h}" for h in shown]
    user += ["", f"## Write hint level {level} of 4: {name}", how]
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(user)}]
    for reply, leak in withheld:
        messages.append({"role": "assistant", "content": reply})
        messages.append({"role": "user", "content": rewrite_request(level, leak)})
    return messages


def rewrite_request(level: int, leak: Leak) -> str:
    """Why the reply above was withheld, every reason and the lines at fault, and what to write instead."""
    name = LEVELS[level][0]
    text = ["Your hint above was withheld: the learner never saw it. The leak guard found:"]
    text += [f"- {reason}" for reason in leak.reasons]
    lines = [line for piece in leak.code for line in piece.splitlines() if line.strip()]
    if lines:
        text += ["The lines of yours that gave the answer away:"] + [f"    {line}" for line in lines]
    text += ["", f"Write hint level {level} ({name}) again. Explain the idea in words and let the learner write "
                 "every line of code: no line of the solution in any form (not in a code block, an indented "
                 "block, a comment, a string, a plain line of prose, nor as right-hand sides)."]
    return "\n".join(text)


class HintLog:
    """Append-only JSONL of AI hint attempts and leaks: what a facilitator may audit. No keys,
    no code (hashes only)."""

    def __init__(self, path: Path | None, room: Callable[[int], None] | None = None):
        """`room(size)`: raises OSError when the folder has no room for `size` more bytes (a quota)."""
        self.path = path
        self.room = room
        self._lock = threading.Lock()

    def write(self, **record) -> None:
        """A log that cannot be written (a pipe or a link in its place, a full disk) loses the record,
        never the learner's hint: opening a pipe here used to wait forever for a reader."""
        if self.path is None:
            return
        from tutor.store import append_regular

        record = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **record}
        data = (json.dumps(record) + "\n").encode("utf-8")
        with self._lock, contextlib.suppress(OSError):
            if self.room is not None:
                self.room(len(data))
            append_regular(self.path, data)


def ask_hint(puzzle, level: int, learner: str, context: str, shown: list[str], settings, *,
             passes: Callable[[str], bool], on_text: Callable[[str], None] = lambda t: None,
             on_status: Callable[[str], None] = lambda t: None,
             on_progress: Callable[[int], None] = lambda n: None, cancel: threading.Event | None = None,
             log: HintLog | None = None) -> HintOutcome:
    """One hint at `level`. `passes(source)` runs the checker in the engine's child process.

    `on_text` gets the reply once, whole, after the guard has passed it; `on_progress` the number
    of characters received so far of the reply being written (never any of its text)."""
    cancel = cancel or threading.Event()
    log = log or HintLog(None)
    authored = authored_hint(puzzle, min(level, 3)) or "No authored hint at this level."
    reason = settings.unavailable()
    if reason:
        return HintOutcome(level, authored, "authored", note=f"Authored hint: {reason}.")
    if level == 4 and not settings.full_code_hints:
        return HintOutcome(level, authored, "authored",
                           note="Full solutions are off by your facilitator's policy; here is the last authored hint.")
    guard = LeakGuard(puzzle.reference, puzzle.starter, learner, passes)
    outcome = HintOutcome(level, authored, "authored")
    withheld: list[tuple[str, Leak]] = []
    code_hash = hashlib.sha256(learner.encode()).hexdigest()[:16]
    for attempt in range(1 + MAX_RETRIES):
        outcome.attempts = attempt + 1
        messages = build_messages(puzzle, level, learner, context, shown, withheld)
        received = 0
        try:
            stream = ChatStream(settings, messages, cancel=cancel)
            for delta in stream:  # held whole: any part of it may be code
                received += len(delta)
                on_progress(received)
        except Cancelled:
            outcome.cancelled = True
            outcome.note = "Hint cancelled."
            log.write(event="cancelled", puzzle=puzzle.id, level=level, model=settings.model, code=code_hash)
            return outcome
        except AIError as e:
            outcome.note = f"{e.message}. Here is the authored hint instead."
            log.write(event="error", kind=e.kind, puzzle=puzzle.id, level=level, model=settings.model)
            return outcome
        outcome.usage.add(stream.usage)
        text = stream.text.strip()
        leak = guard.judge(text) if level < 4 else None
        if leak is None:
            outcome.text, outcome.source = text, "ai"
            on_text(text)
            log.write(event="hint", puzzle=puzzle.id, level=level, model=settings.model, attempts=attempt + 1,
                      leaks=outcome.leaks, prompt_tokens=outcome.usage.prompt_tokens,
                      completion_tokens=outcome.usage.completion_tokens, cost_usd=outcome.usage.cost_usd,
                      code=code_hash)
            return outcome
        outcome.leaks += 1
        log.write(event="leak_withheld", puzzle=puzzle.id, level=level, model=settings.model, reasons=leak.reasons,
                  attempt=attempt + 1, code=code_hash)
        more = f", and {len(leak.reasons) - 1} more reason(s)" if len(leak.reasons) > 1 else ""
        on_status(f"Withheld a hint that gave too much away ({leak.reasons[0]}{more}); "
                  + ("asking again." if attempt < MAX_RETRIES else "here is the authored hint."))
        withheld.append((text, leak))
    outcome.note = (f"The model's hints gave the answer away {outcome.leaks} time(s); here is the authored hint "
                    "instead.")
    return outcome


class SimChecker:
    """`passes(source)` for the leak guard: the puzzle's checker on our simulator, in the engine's
    child process (model-written code never runs in this one)."""

    def __init__(self, puzzle_id: str, timeout: float = 10.0, runner=None):
        """`runner`: a simulator Runner the caller already has (and closes); else one of our own."""
        from ..engine.runner import Runner

        self.puzzle_id = puzzle_id
        self._owned = runner is None
        self.runner = Runner("sim", timeout=timeout) if runner is None else runner

    def __call__(self, source: str) -> bool:
        result = self.runner.check(self.puzzle_id, source, "hint.py", seed=0, n_random=1, keep_traces=False,
                                   untrusted=True)  # the real compiler accepts it before any of it runs
        return bool(result.verdict.passed)

    def close(self) -> None:
        if self._owned:
            self.runner.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
