"""The AI coach's optimiser: a model proposes, the verifier judges, the judgement goes back.

A target is a coaching task (kernels/, judged by `verify`) or a solved puzzle (judged by the puzzle
checker). Each round asks the model for one complete module (or several samples), extracts it,
judges it in a child process, and turns the verdict into feedback for the next prompt. The loop
stops at the first budget spent (rounds, wall time, tokens, money), on the target score, or when
cancelled. Only verified candidates can become "best"; every attempt is appended to a JSONL log
from which a session can be replayed or resumed.

Scores: on a GPU, the verified speedup over the baseline timed in the same process; on the
simulator, which has no clock, the modelled speedup: the naive kernel's modelled H200 time over the
candidate's at the task's scored shape (engine/analysis/modelled_time.py), labelled as modelled.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from ..engine.analysis.counters import verdict_advice
from ..engine.analysis.modelled_time import floor_seconds

SYSTEM = """You are an expert CUDA performance engineer writing Numba-CUDA (Python, `from numba import cuda`).
You make a given kernel faster without changing what it computes. Reply with exactly one complete \
Python module in one ```python block, then a section headed "Why it is faster" of at most 120 words. \
A verifier runs your module in a separate process on inputs you never see; the user's message says \
exactly what it checks and how the score is computed. Only a candidate it passes is kept."""

TASK_RULES = """## The candidate contract
A module with its @cuda.jit kernels and one host function `launch(out, *inputs)`. launch receives \
device arrays: it may read their .shape, .size, .ndim and .dtype, take slice views (x[a:b]), pass \
them to kernels and allocate device scratch with cuda.device_array / cuda.device_array_like; besides \
kernel launches, written kern[grid, block](args) or kern[grid, block, 0, shared_bytes](args), it may \
call only len, min, max, int, abs, math.ceil and math.floor. It returns nothing. As on a real GPU, \
device arrays have no host arithmetic, no numpy functions, no element access and no host copies: \
every output element must be computed by a kernel. Only numba, math and numpy (for dtypes) may be \
imported. No try/except, no streams, no float16, no module state written at run time. The output \
arrives filled with NaN; every element must be written. Inputs must not be modified."""

STOP_REASONS = {
    "rounds": "every round of the budget was spent",
    "time": "the wall-time budget ran out",
    "tokens": "the token budget ran out",
    "money": "the money budget ran out",
    "target": "the best score reached the target",
    "floor": "the best kernel is at the model's floor: one launch and one wait on DRAM (every input read "
             "once, the output written once), so no kernel can score higher in the model",
    "cancelled": "cancelled",
    "model_error": "the model cannot be called (the same error would repeat)",
}

# Model-call failures that the next call would repeat word for word: the loop stops on the first.
REPEATING_ERRORS = {"no_key", "auth", "bad_model", "no_model", "not_found"}

# "traffic" (naive bytes over the candidate's) was the simulator's score before the model; it is
# kept so that older session logs replay with their own words.
SCORE_LABEL = {"speedup": "speedup (GPU, verified)", "modelled": "modelled speedup (simulator, H200 model)",
               "traffic": "global-memory traffic ratio (simulator)"}


HISTORY_TOKENS = 4000
"""The prompt's room for the rounds before the last, in tokens estimated as characters / 4 (a usual
rule of thumb for English and code under BPE tokenizers, cheap and tokenizer-free; see approx_tokens).
A model without memory starts each round from the prompt alone: the last round's candidates always
come whole (their code and the verifier's words), and the earlier rounds as summaries, newest first,
while they fit. 4,000 tokens hold some 20 rejected rounds' summaries; with the task, the starting and
best kernels and the last candidate, a prompt stays near 10,000 tokens, which leaves a reasoning
model with a 32k-token context room for its OPTIMISE_REPLY_TOKENS."""
HISTORY_ITEM_CHARS = 1200  # one earlier attempt's summary at most (a first sentence may run long)


@dataclass
class Budget:
    """When a session stops: the first of these spent, or the target reached.

    `wall_s`, two hours, fits the default rounds of a reasoning model served on one's own machine: its
    first reply in the optimiser took 5.6 minutes, so a round (the reply, then a verification of
    under a minute, five at most) takes 6 to 10 minutes, and ten of them take 60 to 100. At the
    former 15 minutes such a model got three rounds. A fast hosted model ends its ten rounds long
    before, so the longer budget costs it nothing; it is the guard against a model that is slower
    still, and --budget or optimise_wall_time sets it."""

    rounds: int = 10
    wall_s: float = 2 * 3600.0
    tokens: int | None = None
    cost_usd: float | None = None
    target: float | None = None     # stop once the best score reaches this
    samples: int = 1                # candidates asked for per round
    history_tokens: int = HISTORY_TOKENS  # the prompt's room for the rounds before the last


@dataclass
class Judgement:
    correct: bool
    compiled: bool
    failures: list
    score: float | None = None       # higher is better; None when not measurable
    score_kind: str | None = None    # "speedup" or "modelled"
    timing: dict | None = None
    flags: list = field(default_factory=list)
    at_floor: bool = False           # the simulator's score cannot improve: modelled time at the floor
    unchecked: list = field(default_factory=list)  # its lines that ran in no verified shape


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
    error_kind: str | None = None     # AIError.kind of that failure: no_key, auth, timeout, ...
    at_s: float | None = None         # seconds from the session's start to this verdict
    at_floor: bool = False            # its modelled time is at the task's floor: the score cannot improve
    unchecked: list = field(default_factory=list)  # lines no verified shape ran: never the best

    @property
    def verified(self) -> bool:
        """The verifier passed this code and nothing on record says otherwise: a module was judged,
        no failure of any kind, and every line ran in a verified shape. Only such an attempt can be
        the best; `correct` alone is not taken on trust (a log read back may say anything)."""
        return bool(self.code) and self.correct and not self.failures and not self.unchecked and not self.error

    @property
    def trusted(self) -> bool:
        return self.verified and not self.flags

    def round_label(self) -> str:
        """The attempt's name in every view: "round 3", or "round 3.2" for a round's second sample."""
        return f"round {self.round}" + (f".{self.sample}" if self.sample else "")

    def summary_line(self) -> str:
        """This attempt in one line, in the words every view shows (the CLI prints it, the app's
        table shows it): the verifier's verdict, or why there was nothing to judge, and what the
        model call cost."""
        head = self.round_label()
        if self.error:
            return f"{head}: model call failed: {self.error}"
        cost = f", {(self.prompt_tokens or 0) + (self.completion_tokens or 0)} tokens" + (
            f", ${self.cost_usd:.4f}" if self.cost_usd else "")
        if self.code is None:
            return f"{head}: no code block in the reply{cost}"
        if not self.correct:
            kinds = sorted({str(f.get("kind") or "?") for f in self.failures})
            return f"{head}: REJECTED ({', '.join(kinds)}){cost}"
        kind = (self.timing or {}).get("confirmation") or self.score_kind
        score = f", {self.score:.2f}x ({kind})" if self.score is not None else ""
        return f"{head}: correct{score}{' FLAGGED' if self.flags else ''}{cost}"


# The heading above the model's explanation of its best candidate, in every view.
EXPLANATION_HEADING = "Why it is faster, in the model's words (not checked by the verifier)"


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
        from tutor.sourcelines import unified_diff

        return unified_diff(self.start_code, self.best.code, "yours.py", "optimised.py")

    def stop_text(self) -> str:
        """Why the session ended, in words both views print."""
        return STOP_REASONS.get(self.stop_reason, self.stop_reason)

    def summary_lines(self, log_path: Path | str | None = None) -> list[str]:
        """The end of a session in the words every view shows: why it stopped and what it spent
        (with the log's path), then the best verified candidate, or that there is none."""
        t = self.totals()
        stopped = (f"stopped ({self.stop_reason}: {self.stop_text()}) after {t['rounds']} round(s), "
                   f"{self.elapsed_s:.0f} s, {t['prompt_tokens']} + {t['completion_tokens']} tokens"
                   + (f", ${t['cost_usd']:.4f}" if t["cost_usd"] else "") + (f"; log: {log_path}" if log_path else ""))
        b = self.best
        if b is None:
            return [stopped, "No verified candidate: your kernel stays as it is."]
        score = (f"{b.score:.2f}x {SCORE_LABEL[b.score_kind]}" if b.score is not None
                 else "correct (no score on this backend)")
        flags = f"; flagged for review: {'; '.join(b.flags)}" if b.flags else ""
        return [stopped, f"best: {b.round_label()}, {score}{flags}"]

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

    def __init__(self, name: str, backend: str = "sim", timeout: float | None = None):
        """`timeout`: each verification's limit, by default the one `gpu-tutor verify` has."""
        from .tasks import load_task
        from .verify import DEFAULT_TIMEOUT

        self.task = load_task(name)
        self.name = name
        self.backend = backend
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self._baseline = None

    def describe(self) -> str:
        t = self.task
        return "\n\n".join([f"# Task: {t.title}\n{t.statement.strip()}", TASK_RULES, self.checks()])

    def checks(self) -> str:
        """What the verifier does with a candidate, stated as it is done (verify.py): the shapes, the
        tolerance, the detectors and the score's formula with its numbers. A model told less guesses,
        and one told more than is checked is invited to cheat."""
        t = self.task
        rtol, atol = t.tolerance
        names = ", ".join(t.data.get("shape_names", [])) or "shape"
        lines = ["## What the verifier checks", f"Shapes are ({names})."]
        if self.backend == "gpu":
            lines.append(f"- On the GPU: fixed shapes {_shapes(t.shapes('gpu'))}, each run twice with fresh random "
                         "inputs (a second run whose output differs is rejected as nondeterministic).")
            lines.append("- Beside it, the simulator runs the same module on its own shapes:")
        lines += self.sim_shape_lines()
        lines += [f"- Correct means: on every shape every output element within rtol={rtol:g}, atol={atol:g} of a "
                  "float64 reference, every element written (the output is NaN-filled before each run) and the "
                  "inputs unchanged.",
                  "- Every launch on the simulator is traced: a data race, an out-of-bounds index (negative too), "
                  "a read of shared memory no thread wrote, or a barrier not reached by every thread of a block "
                  "fails the candidate, with its line."]
        if self.backend == "gpu":
            largest = t.largest_shape("gpu")
            lines += [f"- Timed at the largest shape {largest}: the output is re-poisoned before every timed run "
                      "and timed runs' outputs are judged too.",
                      f"- Score: the naive kernel's time over yours, both timed in the same process at {largest}. A "
                      "speedup above 10x is flagged for review, not trusted."]
        else:
            lines += self.score_lines()
        return "\n".join(lines + ["", sim_support_text()])

    def sim_shape_lines(self) -> list[str]:
        t = self.task
        lines = [f"- Simulator: fixed shapes {_shapes(t.shapes('sim'))}, each run twice with fresh random inputs "
                 "(a second run whose output differs is rejected as nondeterministic)."]
        if t.scored_shape():
            lines.append(f"- The scored shape {t.scored_shape()}, run once, on the same inputs at every verification "
                         "(drawn from a seed you never see).")
        for rule in t.data.get("sim_random", []):
            ranges = ", ".join(f"{k} from {v[0]} to {v[1]}" for k, v in rule.items() if k != "not_multiple_of")
            step = rule.get("not_multiple_of")
            lines.append(f"- One shape drawn at every verification from a seed you never see: {ranges}"
                         + (f", never a multiple of {step}." if step else "."))
        return lines

    def score_lines(self) -> list[str]:
        naive, scored = self.naive_record(), self.task.scored_shape()
        how = model_text()
        if not naive:
            return [f"- Score: the naive kernel's modelled time over yours (no clock on the simulator). {how}"]
        shape = tuple(naive["shape"])
        floor = naive.get("floor") or self.task.floor_bytes(shape)
        floor_s = naive.get("floor_s") or floor_seconds(floor)
        return [f"- Score: the naive kernel's modelled time at {shape} ({_us(naive['modelled_s'])}) over yours "
                f"there: a modelled speedup on an H200, from the simulator's trace (no clock on the simulator). "
                f"{how}",
                f"- The floor: one launch and one wait on DRAM, every input read once and every output element "
                f"written once ({floor:,} bytes), {_us(floor_s)}: the best possible score is "
                f"{naive['modelled_s'] / floor_s:.2f}x; a candidate within {FLOOR_MARGIN:.0%} of it ends the session, since no "
                f"kernel can score higher in the model. A candidate that moves fewer bytes than the floor is "
                "rejected (the answer cannot come from its kernels)." + ("" if scored else " (This task has no "
                                                                          "fixed scored shape: the largest fixed "
                                                                          "shape is scored.)")]

    def baseline_source(self) -> str:
        return self.task.source("naive")

    def judge(self, source: str) -> Judgement:
        from .verify import verify

        verdict = verify(self.name, source, self.backend, timeout=self.timeout)
        failures = [f.to_json() for f in verdict.failures]
        compiled = not any(f["kind"] in ("compile_error", "static") for f in failures)
        j = Judgement(verdict.passed, compiled, failures, timing=verdict.timing and verdict.timing.to_json(),
                      flags=list(verdict.flags), unchecked=list(verdict.unchecked_lines))
        if j.correct and self.backend == "gpu" and j.timing:
            j.score, j.score_kind = float(j.timing["speedup"]), "speedup"
        elif j.correct and verdict.measures:
            mine, base = scored_record([m.to_json() for m in verdict.measures]), self.naive_record()
            if mine and base and mine.get("modelled_s") and base.get("modelled_s"):
                j.score, j.score_kind = base["modelled_s"] / mine["modelled_s"], "modelled"
                j.timing = {"shape": mine["shape"], "modelled_us": mine["modelled_s"] * 1e6,
                            "baseline_modelled_us": base["modelled_s"] * 1e6, "floor_us": mine["floor_s"] * 1e6,
                            "bytes": mine["bytes"], "baseline_bytes": base["bytes"], "floor_bytes": mine.get("floor"),
                            "kernels": mine.get("modelled") or []}
                j.at_floor = at_floor(mine)
                from .calibration import judged

                j.timing["confirmation"], j.timing["confirmation_text"], unconfirmed = judged(
                    self.name, j.score, mine.get("modelled") or [])
                if unconfirmed:
                    j.flags.append(j.timing["confirmation_text"])
        return j

    def naive_record(self) -> dict | None:
        """The naive kernel's record at the scored shape (its bytes and modelled time), measured
        once: the scored shape and its inputs are fixed, so it is the same work every candidate is
        measured on."""
        if self._baseline is None:
            from .verify import verify

            verdict = verify(self.name, self.task.source("naive"), "sim", timeout=self.timeout)
            self._baseline = scored_record([m.to_json() for m in verdict.measures]) or {}
        return self._baseline if self._baseline.get("modelled_s") else None


# What numba-cuda offers kernels that the simulator may lack, as numba-cuda spells it: the prompt names
# each one as missing only while the simulator has no such member (sim_support_text).
NUMBA_CUDA_EXTRAS = {"match_any_sync": "cuda.match_any_sync", "match_all_sync": "cuda.match_all_sync",
                     "eq_sync": "cuda.eq_sync", "cg": "cooperative groups (cuda.cg)",
                     "fp16": "half precision (cuda.fp16)"}
# Members of the simulated `cuda` that are not for kernels: launch()'s host side (TASK_RULES says what
# of it a candidate may call) and the simulator's own plumbing.
_NOT_FOR_KERNELS = {"jit", "device_array", "device_array_like", "to_device", "stream", "default_stream",
                    "legacy_default_stream", "per_thread_default_stream", "synchronize", "typed_calls", "launch",
                    "types"}


def sim_support_text() -> str:
    """What of `numba.cuda` the simulator runs in a kernel, read from the simulated module itself
    (engine/sim/fakecuda.py: its attributes, functions and namespaces such as cuda.atomic), so that
    a function added to the simulator is offered to the model with no edit here; and what it does
    not run of numba-cuda's other kernel features (NUMBA_CUDA_EXTRAS). A model told less writes
    around features it could have used; one told more writes code the verifier refuses."""
    import keyword

    from ..engine.sim.fakecuda import TYPES, FakeCuda

    cuda = FakeCuda(kernel_class=None, intrinsic_types=None)
    names = dict.fromkeys([*vars(cuda), *(n for klass in type(cuda).__mro__ for n in vars(klass))])
    attributes, functions, spaces = [], [], []
    for name in names:
        if name.startswith("_") or name in _NOT_FOR_KERNELS or name in TYPES:
            continue
        value = getattr(cuda, name)
        members = [m for m in getattr(value, "__dict__", {}) if not m.startswith("_") and m.isidentifier()
                   and not keyword.iskeyword(m)]
        if callable(value):
            functions.append(f"cuda.{name}")
        elif members and all(callable(getattr(value, m)) for m in members):
            spaces.append(", ".join(f"cuda.{name}.{m}" for m in members)
                          + (" (static, and dynamic shared memory: cuda.shared.array(0, dtype) in a kernel "
                             "launched as kern[grid, block, 0, nbytes])" if name == "shared" else ""))
        else:
            attributes.append(f"cuda.{name}")
    scalars = [n for n, t in TYPES.items() if getattr(t, "name", None) == n and hasattr(t, "np_dtype")]
    lacks = [words for name, words in NUMBA_CUDA_EXTRAS.items() if name not in names]
    return ("The simulator runs, of numba.cuda in a kernel (this list is read from the simulator itself): "
            + "; ".join([", ".join(attributes), ", ".join(functions), *spaces])
            + f"; the scalar types {', '.join(scalars)} (casts and dtypes); and Python's math module."
            + (f" It does not run {', '.join(lacks)}." if lacks else ""))


def model_text(device: str = "h200") -> str:
    """How the simulator's score is computed, for the model's prompt, with the figures the score
    uses: a model told less guesses what to improve, and one told what does not count (arithmetic)
    wastes rounds on it."""
    from ..engine.analysis.device_model import DEVICES
    from ..engine.analysis.modelled_time import TIMINGS

    dev, t = DEVICES[device], TIMINGS[device]

    def ns(cycles):
        return f"{cycles / t.clock_hz * 1e9:.0f} ns"

    return (
        f"The modelled time is a model of the {dev.name}, worked out from every warp's memory requests in the "
        f"trace. It is not a measurement. For each kernel: a launch ({t.launch_s * 1e6:g} us), plus the largest "
        f"of: (a) latency: the blocks run in waves over {dev.sms} SMs (as many per SM as occupancy allows). A "
        f"wave lasts as long as its slowest block. A block waits, phase by phase (barriers split phases, "
        f"{ns(t.barrier_cycles)} each), for its slowest warp's rounds of loads. A round is the set of loads in "
        f"flight together: the loads of one basic block of Numba's compiled code (an unrolled loop's trips, "
        f"unless each trip's loads sit behind an `if`; a runtime-trip loop is unrolled about "
        f"{t.runtime_unroll} times); a load whose address is the value another load of its line read waits "
        f"for it. A round costs the "
        f"deepest level it reaches: DRAM ({ns(t.dram_cycles)}) for a 32-byte sector nothing touched before "
        f"(L2 starts cold), L2 ({ns(t.l2_cycles)}) for a sector an earlier kernel or wave touched, L1 "
        f"({ns(t.l1_cycles)}) for one this block loaded in an earlier round, shared memory "
        f"({ns(t.shared_cycles)}). Each wavefront after the first adds a cycle: one per 128-byte line of a "
        f"global request, more for bank conflicts. Stores and atomics do not wait for memory, but a store "
        f"ends the round of loads of its own space (global or shared) before it: it waits for its value, "
        f"and no later load of that space moves above it. (b) the memory pipe: every "
        f"wavefront of the busiest SM, one per cycle ({t.clock_hz / 1e9:g} GHz). (c) DRAM: each sector once, "
        f"at {dev.bandwidth / 1e12:g} TB/s. (d) atomics on one address, one every {t.atomic_cycles:g} cycle(s). "
        f"(e) instruction issue: the instructions Numba's real compile makes of each source line, times the "
        f"times each warp ran the line (lanes of a warp in different branches or loop trips run one after "
        f"another), each SM's four schedulers issuing one warp instruction per cycle; float64 at half the rate "
        f"of float32, sin/exp/rsqrt and conversions at an eighth, divides, square roots and integer modulo as "
        f"long sequences, local memory through L1. A warp's own dependent instructions add to its latency "
        f"chain in (a). Registers, cache capacity and how often a branch is taken are not modelled. So these "
        "all score better: fewer dependent rounds, fewer launches, coalesced requests, no bank conflicts, "
        "fewer bytes, less work per thread, no serial chains in few threads, no divergent lanes.")


# within 3% of the model's floor, a faster kernel is not worth another round: the floor counts memory
# alone, and a thread's index arithmetic before its first load adds some tens of cycles (1.5% at 4,099
# elements for one thread per element)
FLOOR_MARGIN = 0.03


def scored_record(records) -> dict | None:
    """The record the score is taken from: the task's scored shape; failing that (a task without
    `sim_scored`), the largest fixed shape. Never a drawn shape: it differs between runs, so two
    candidates' figures there are not the same work."""
    if not records:
        return None
    scored = [r for r in records if r.get("scored")]
    if scored:
        return scored[-1]
    fixed = [r for r in records if not r.get("drawn")] or records
    return max(fixed, key=lambda r: (math.prod(r["shape"]), r["bytes"]))


def at_floor(record: dict | None) -> bool:
    """Is the record's modelled time within FLOOR_MARGIN of the model's floor (one launch, one wait
    on DRAM, the floor's bytes)? Then no candidate can score higher in the model."""
    floor, mine = (record or {}).get("floor_s"), (record or {}).get("modelled_s")
    return bool(floor) and bool(mine) and mine <= floor * (1 + FLOOR_MARGIN)


def _us(seconds: float) -> str:
    us = seconds * 1e6
    return f"{us:.3g} us" if us >= 0.01 or us == 0 else "<0.01 us"


def _shapes(shapes) -> str:
    return ", ".join(str(tuple(s)) for s in shapes)


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
        self._start_advice: list[str] = []
        self._start_checked = False

    def describe(self) -> str:
        p = self.puzzle
        configs = "; ".join(f"{c.name}: blocks {tuple(c.blocks)}, threads {tuple(c.threads)}" for c in p.configs)
        text = (f"# Puzzle: {p.title}\n{p.summary}\n\n{p.lesson.strip()}\n\nThe module must define "
                f"`kernel({', '.join(p.signature)})` decorated with @cuda.jit; the launch is fixed by the "
                f"puzzle ({configs}) plus random configs of the same shape. Budgets per thread: "
                f"{p.budget or 'none'}. Constants: {p.constants or 'none'}.")
        if self._start_advice:
            text += ("\n\nThe starting kernel's memory counters (from the simulator's trace, as Nsight Compute "
                     "counts them), its costliest lines:\n" + "\n".join(f"- {a}" for a in self._start_advice))
        return text + "\n\n" + sim_support_text()

    def baseline_source(self) -> str:
        return self.start_source

    def _check(self, source):
        from ..engine.runner import Runner

        if self._runner is None:
            self._runner = Runner(self.backend, timeout=self.timeout)
        return self._runner.check(self.name, source, "candidate.py", keep_traces=False, untrusted=True).verdict

    def check_start(self):
        """The starting kernel's verdict (it must pass: a solved puzzle), run once; its kernel time
        is the baseline every candidate is compared with, its memory counters the model's first lead."""
        verdict = self._check(self.start_source)
        self._start_ms = _kernel_ms(verdict)
        self._start_advice = verdict_advice(verdict, self.start_source.splitlines())
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
        lead = verdict_advice(verdict, source.splitlines())
        if verdict.passed and lead:
            j.timing = {**(j.timing or {}), "counters": lead}
        return j

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()


def screen_failures(source: str) -> list[dict]:
    """The static screen's findings on a puzzle candidate, as the failures a verdict carries (kind
    "static", like the task verifier's), so the feedback names the rule and the line."""
    from ..engine.verdict import Failure
    from ..engine.loading.static_rules import check_puzzle_module

    return [Failure(kind="static", rule=f.rule, line=f.line, message=f"{f.message} {f.fix}".strip()).to_json()
            for f in check_puzzle_module(source, "candidate.py")]


def _kernel_ms(verdict) -> float | None:
    times = [c.kernel_ms for c in verdict.configs if c.kernel_ms]
    return sum(times) if times else None


@dataclass(frozen=True)
class WorkedAnswer:
    """What a learner may read when the optimiser cannot run: a task's expert kernel or a
    puzzle's reference. `title` heads the code where a screen shows it beside the learner's."""

    title: str
    what: str         # "the expert kernel (kernels/softmax/expert.py)", "the reference"
    reference: str    # the code
    walkthrough: str = ""  # a task's walkthrough (tutor/coach/walkthrough.py) as Markdown, or ""

    def notice(self) -> str:
        return f"Your facilitator's policy allows the worked answer instead: {self.what}."


def worked_answer(target, settings) -> WorkedAnswer | None:
    """The worked answer for a target when no model can be called, if the facilitator's policy
    allows full code (`full_code_hints`); None when it does not. Both views ask this and show
    what it returns; neither decides on its own."""
    if not settings.full_code_hints:
        return None
    if target.kind == "task":
        from .walkthrough import walkthrough_markdown

        return WorkedAnswer(f"{target.task.title} (expert kernel)",
                            f"the expert kernel (kernels/{target.name}/expert.py)", target.task.source("expert"),
                            walkthrough_markdown(target.task))
    return WorkedAnswer(target.puzzle.title, "the reference", target.puzzle.reference)


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
    """What the verifier found, for the next prompt: each kind of failure once, with every line and
    shape it was seen at, and for a correct candidate what its score is made of."""
    head = f"Round {attempt.round}" + (f" sample {attempt.sample}" if attempt.sample else "")
    if attempt.error:
        return f"{head}: the model call failed ({attempt.error})."
    if attempt.code is None:
        need = "`launch(out, *inputs)`" if kind == "task" else "`kernel(...)`"
        return f"{head}: no ```python block with a complete module defining {need} was found in your reply."
    if not attempt.correct:
        return "\n".join([f"{head}: REJECTED by the verifier."] + failure_lines(attempt.failures))
    text = f"{head}: CORRECT."
    if attempt.score is not None:
        text += f" {SCORE_LABEL[attempt.score_kind]}: {attempt.score:.2f}x"
    t = attempt.timing or {}
    if "ms" in t:
        text += f" ({t['ms']:.4f} ms vs baseline {t.get('baseline_ms', 0):.4f} ms)"
    if "modelled_us" in t:
        text += (f" (modelled {t['modelled_us']:.3g} us at the scored shape {tuple(t.get('shape') or ())}, the "
                 f"naive kernel {t.get('baseline_modelled_us', 0):.3g} us, the floor {t.get('floor_us', 0):.3g} us; "
                 f"{t.get('bytes', 0):,} bytes moved, the naive kernel {t.get('baseline_bytes', 0):,})")
        if t.get("confirmation_text") and not t["confirmation"].endswith("unconfirmed"):  # a flag says that one
            text += f"\n- {t['confirmation_text']}"
        for k in t.get("kernels") or []:
            text += f"\n- {kernel_line(k)}"
    elif "bytes" in t:  # a log from before the model: the traffic score's figures
        text += (f" ({t['bytes']:,} bytes moved at the scored shape {tuple(t.get('shape') or ())}; the naive "
                 f"kernel moves {t.get('baseline_bytes', 0):,}" + (f", the floor is {t['floor_bytes']:,}"
                                                                    if t.get("floor_bytes") else "") + ")")
    for lead in t.get("counters") or []:
        text += f"\n- memory counters: {lead}"
    for flag in attempt.flags:
        text += f"\n- flagged: {flag}"
    if attempt.unchecked:
        text += (f"\n- line(s) {', '.join(str(n) for n in attempt.unchecked[:20])} ran in no verified shape, so this "
                 "kernel cannot be kept as the best: make every line reachable by the shapes the task allows, or "
                 "remove the lines that are not")
    if attempt.at_floor:
        return text + ("\nThis is the model's floor: one launch and one wait on DRAM, every input read once and the "
                       "output written once. No kernel can score higher in the model; the session stops here.")
    if best is not None and best is not attempt and best.score is not None:
        if best.at_floor:
            text += f"\nBest so far: round {best.round}, {best.score:.2f}x, at the floor: it cannot be beaten here."
        else:
            text += f"\nBest so far: round {best.round}, {best.score:.2f}x. Beat it."
    return text


def kernel_line(k: dict) -> str:
    """One kernel of a modelled time, in the words the feedback gives the model: what bounds it
    and the figures a kernel writer can change."""
    def us(key):
        return _us(float(k.get(key, 0)))

    margin = k.get("margin") or 0
    by = f", {margin:.3g}x the next bound" if margin else ""
    lines = k.get("heaviest") or []
    heavy = (" (" + ", ".join(f"line {a} {b:.0%}" for a, b in lines) + ")") if lines else ""
    return (f"kernel `{k.get('name', '?')}`: {us('seconds')}, bound by {k.get('bound', '?')}{by} (launch "
            f"{us('launch_s')}; latency {us('latency_s')}: {k.get('rounds', 0)} dependent rounds of loads, "
            f"{us('compute_s')} of dependent instructions and {k.get('barriers', 0)} barrier(s) on the slowest "
            f"block, {k.get('waves', 0)} wave(s); issue {us('issue_s')} for {int(k.get('instructions', 0)):,} warp "
            f"instructions{heavy}; memory pipe {us('pipe_s')}; DRAM {int(k.get('dram_bytes', 0)):,} bytes, "
            f"{us('dram_s')}; same-address atomics {us('atomic_s')})")


def failure_lines(failures: list, groups: int = 5, limit: int = 600) -> list[str]:
    """One item per (kind, rule): its first message whole, then every distinct line and shape of
    the same failure, so a second location (the next tile's load) is not hidden by the first."""
    order: dict = {}
    for f in failures:
        order.setdefault((f.get("kind"), f.get("rule")), []).append(f)
    out = []
    for (kind, rule), same in list(order.items())[:groups]:
        first = same[0]
        lines = sorted({f["line"] for f in same if isinstance(f.get("line"), int)})
        shapes = list(dict.fromkeys(f["config"] for f in same if f.get("config")))
        where = f" at line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}" if lines else ""
        where += f" on {', '.join(shapes)}" if shapes else ""
        err = [d.get("max_error") for d in first.get("details", []) if isinstance(d, dict) and d.get("max_error")]
        err = f"; max error {err[0]:.3g}" if err else ""
        more = f" ({len(same)} occurrences)" if len(same) > 1 else ""
        out.append(f"- {kind}{'/' + rule if rule else ''}{where}{more}: {_trim(first.get('message', ''), limit)}{err}")
    if len(order) > groups:
        out.append(f"- ... and {len(order) - groups} more kind(s) of failure")
    return out


def _trim(message: str, limit: int = 600) -> str:
    """Whole sentences up to `limit`; the first sentence always whole, however long."""
    message = " ".join(message.split())
    if len(message) <= limit:
        return message
    ends = [m.end() for m in re.finditer(r"[.:;!?](?=\s)", message)]
    cut = max([e for e in ends if e <= limit], default=ends[0] if ends else len(message))
    return message[:cut] + (" ..." if cut < len(message) else "")


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
        return ("gpu-tutor's CPU simulator: it traces every thread's accesses and counts the memory requests "
                "each launch makes; it has no clock, so nothing is timed.")
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10).stdout.strip().splitlines()
        return f"Judged and timed on an NVIDIA GPU: {out[0]}." if out else "Judged and timed on a CUDA GPU."
    except (OSError, subprocess.SubprocessError):
        return "Judged and timed on a CUDA GPU."


def log_path_for(target_name: str, root: Path | str) -> Path:
    """Where a new session's log goes, for every view: `optimise/` in the data folder `root`,
    one file per target and start time."""
    return Path(root) / "optimise" / f"{target_name}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"


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
    """Does a (the later attempt) replace b as the best? Only when a is verified and strictly
    better: trusted (unflagged) beats flagged, a score beats none, then the higher score. Anything
    else keeps b: a later candidate that is only as good has shown nothing more, and may be wrong
    where the verifier did not look (a block it did not simulate, a shape it did not draw); the next
    prompts build on the best, so it moves only for evidence. Two unscored candidates (a kernel too
    slow to simulate at the scored shape) are a tie, never 0.0 against 0.0 won by the later one."""
    if not a.verified:
        return False
    if b is None:
        return True
    if a.trusted != b.trusted:
        return a.trusted
    if a.score is None or b.score is None:
        return b.score is None and a.score is not None
    return a.score > b.score and not math.isclose(a.score, b.score, rel_tol=1e-9, abs_tol=1e-12)


def optimise(target, start_code: str, settings, budget: Budget, *, log_path: Path | None = None,
             resume: list[Attempt] | None = None, cancel: threading.Event | None = None,
             on_event: Callable[[str, object], None] = lambda kind, data: None) -> OptimiseResult:
    """Run the loop. Events: ("round", n), ("delta", text), ("attempt", Attempt), ("status", text)."""
    from tutor.ai.llm import AIError, Cancelled, ChatStream

    cancel = cancel or threading.Event()
    settings = settings.for_optimiser()
    log = OptimiseLog(log_path)
    attempts: list[Attempt] = list(resume or [])
    best = None
    for a in attempts:
        if better(a, best):
            best = a
    started = time.monotonic()
    if not resume:
        log.write({"event": "start", "target": target.name, "kind": target.kind, "backend": target.backend,
                   "model": settings.model, "budget": asdict(budget), "request_timeout_s": settings.request_timeout,
                   "reply_tokens": settings.max_tokens, "start_code": start_code,
                   "start_code_hash": _hash(start_code)})
    device = device_text(target.backend)
    round_no = max((a.round for a in attempts), default=0)
    stop = None
    while stop is None:
        stop = _spent(budget, attempts, round_no, started, best, cancel)
        if stop:
            break
        round_no += 1
        on_event("round", round_no)
        messages = _messages(target, start_code, device, attempts, best, budget.history_tokens)
        prompt_hash = _hash(json.dumps(messages))
        for sample in range(budget.samples):
            if cancel.is_set():
                stop = "cancelled"
                break
            stream = None
            try:
                stream = ChatStream(settings, messages, cancel=cancel)
                for delta in stream:
                    on_event("delta", delta)
                reply, error, error_kind = stream.text, None, None
            except Cancelled:
                stop = "cancelled"
                break
            except AIError as e:
                reply, error, error_kind = "", e.message, e.kind
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
                explanation=explanation, error=error, error_kind=error_kind, at_s=round(time.monotonic() - started, 3),
                at_floor=bool(judgement and judgement.correct and judgement.at_floor),
                unchecked=judgement.unchecked if judgement else [])
            attempts.append(attempt)
            if better(attempt, best):
                best = attempt
            log.write({"event": "attempt", **asdict(attempt)})
            on_event("attempt", attempt)
            if error_kind in REPEATING_ERRORS:
                stop = "model_error"  # the same call will fail the same way: do not spend the budget
                break
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
    if best is not None and best.trusted and best.at_floor:
        return "floor"  # no candidate can score higher on this device: more rounds would be spent for nothing
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


def _messages(target, start_code, device, attempts, best, history_tokens=HISTORY_TOKENS) -> list[dict]:
    """The whole prompt, rebuilt each round from the record alone (a model keeps no memory between
    calls): the task and what is checked, the starting kernel, the best verified kernel, the last
    round's candidates with the code the verifier's line numbers count and its words on each, then
    the earlier rounds in brief (history_lines)."""
    user = [target.describe(), "", f"## Device\n{device}", "", "## The starting kernel", "```python",
            start_code.rstrip(), "```"]
    if best is not None and best.code and best.code != start_code:
        user += ["", f"## Your best verified kernel so far ({best.round_label()})", "```python", best.code.rstrip(),
                 "```"]
    last_round = max((a.round for a in attempts), default=None)
    for a in (a for a in attempts if a.round == last_round):
        user += [""] + last_candidate_lines(a, best, start_code) + [
            "## What the verifier said about it", feedback_for(a, best, target.kind)]
    earlier = history_lines([a for a in attempts if a.round != last_round], best, target.kind, history_tokens)
    if earlier:
        user += ["", "## Earlier rounds, newest first (in brief: the verifier's words, not the code)", *earlier]
    user += ["", "Write a faster, still correct module. One ```python block, then \"Why it is faster\"."]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(user)}]


def last_candidate_lines(attempt: Attempt, best: Attempt | None, start_code: str) -> list[str]:
    """The last round's candidate as the verifier read it: the exact module whose lines its words
    count (line 1 is the block's first line), unless it is a kernel the prompt already shows."""
    head = f"## Your last candidate ({attempt.round_label()})"
    if not attempt.code:
        return [head + ": there was no module to judge"]
    if best is not None and attempt.code == best.code and best.code != start_code:
        return [head + f": the same module as your best verified kernel above ({best.round_label()})"]
    if attempt.code == start_code:
        return [head + ": the same module as the starting kernel above"]
    return [head + ", exactly as the verifier ran it (the line numbers below count its lines from 1)",
            "```python", attempt.code.rstrip("\n"), "```"]


def history_lines(attempts: list[Attempt], best: Attempt | None, kind: str,
                  tokens: int = HISTORY_TOKENS) -> list[str]:
    """The rounds before the last, newest first, one brief item each (what was tried, in the
    model's words, and what the verifier said), as many as fit `tokens` (approx_tokens, a line's
    end counted as one); a last line says how many older ones were left out."""
    def left_out(n: int) -> str:
        return f"- {n} earlier attempt(s) left out to keep this prompt short."

    lines, used = [], 0
    newest_first = sorted(attempts, key=lambda a: (a.round, a.sample), reverse=True)
    for n, a in enumerate(newest_first):
        item = history_item(a, best, kind)
        older = len(newest_first) - n - 1
        if used + approx_tokens(item) + 1 + (approx_tokens(left_out(older)) + 1 if older else 0) > tokens:
            note = left_out(older + 1)
            return lines + ([note] if used + approx_tokens(note) + 1 <= tokens else [])
        lines.append(item)
        used += approx_tokens(item) + 1
    return lines


def approx_tokens(text: str) -> int:
    """A token count estimated as characters / 4, rounded up: no tokenizer is loaded (each model
    has its own), and for English and Python under BPE tokenizers the figure is near enough to keep
    a prompt within a budget."""
    return -(-len(text) // 4)


def history_item(attempt: Attempt, best: Attempt | None, kind: str) -> str:
    """One earlier attempt in brief: its verdict and at most three kinds of failure, each with its
    lines and shapes and the first of its words, and the idea it tried, in the model's words."""
    head = f"- {attempt.round_label()}"
    if attempt.error:
        return f"{head}: the model call failed ({_trim(attempt.error, 200)})."
    if attempt.code is None:
        need = "`launch(out, *inputs)`" if kind == "task" else "`kernel(...)`"
        return f"{head}: no ```python block with a complete module defining {need} in the reply."
    tried = _trim(attempt.explanation, 200)
    tried = f" It tried (your words): {tried}" if tried else ""
    if attempt.correct and attempt.unchecked and not attempt.failures:
        said = (f"correct where it ran, not kept: line(s) {', '.join(map(str, attempt.unchecked[:10]))} ran in no "
                "verified shape.")
    elif not attempt.verified:
        said = "REJECTED: " + ("; ".join(line[2:] for line in failure_lines(attempt.failures, groups=3, limit=240))
                               or "no verdict")
        said += "" if said.endswith(".") else "."
    else:
        score = f", {attempt.score:.2f}x ({SCORE_LABEL.get(attempt.score_kind, attempt.score_kind)})" \
            if attempt.score is not None else ""
        mark = " (your best)" if attempt is best else ""
        flags = f"; flagged: {'; '.join(attempt.flags)}" if attempt.flags else ""
        said = f"correct{score}{mark}{flags}."
    text = f"{head}: {said}{tried}"
    return text if len(text) <= HISTORY_ITEM_CHARS else text[:HISTORY_ITEM_CHARS - 4] + " ..."


def wall_time_spent_text(wall_s: float, give_more: str) -> str:
    """What every view says when the wall-time budget ran out. `give_more` is the view's own way
    to ask for more time ("with --budget {more}"), {more} standing for the suggested budget."""
    from tutor.ai.config import config_path
    from tutor.durations import clock_text, duration_text

    more = duration_text(2 * wall_s)
    return (f"The wall-time budget of {clock_text(wall_s)} ran out: it counts the model's replies and the "
            f"verification, and a round that had begun ran to its end. Give it more {give_more.format(more=more)}, "
            f"or set optimise_wall_time = \"{more}\" under [ai] in {config_path()}.")
