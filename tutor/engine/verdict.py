"""The one answer every backend gives: passed or not, and each failure in plain words.

A Verdict is JSON-serialisable as it stands; the CLI prints it, the app draws it, the hint and the
optimiser read it. Failures carry where they happened (config, array, index, block, thread, line)
so that every consumer can point at the same place.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the vocabulary imports nothing of the engine or numpy
    import numpy as np

    from ..puzzles import LaunchConfig


class Backend(StrEnum):
    """Where a kernel ran. A str too, so that JSON, the wire and the CLI's flags read it as its name."""

    SIM = "sim"              # our tracing simulator
    GPU = "gpu"              # a CUDA GPU through numba-cuda
    NUMBA_SIM = "numba-sim"  # Numba's own simulator (NUMBA_ENABLE_CUDASIM=1)

# Most important first: what stops a kernel from running at all, then what makes it wrong on a
# GPU even when the output looks right, then the output itself, then a right answer reached
# without the technique the puzzle practises.
KINDS = (
    "compile_error",
    "static",
    "unsupported",
    "runtime_error",
    "timeout",
    "implausible",
    "out_of_bounds",
    "barrier_divergence",
    "race",
    "uninitialized_read",
    "budget_exceeded",
    "input_mutated",
    "wrong_shape",
    "not_finite",
    "wrong_output",
    "nondeterministic",
    "technique_missing",  # right on a GPU, but not the way the puzzle teaches
    "perf_target",  # right, but its counters miss the performance track's target: said last
)

KIND_TITLES = {
    "compile_error": "does not compile",
    "static": "was rejected before running",
    "unsupported": "uses something the simulator does not model",
    "runtime_error": "raised an error",
    "timeout": "ran too long",
    "implausible": "claims less work than the task needs",
    "out_of_bounds": "out-of-bounds access",
    "barrier_divergence": "barrier divergence",
    "race": "data race",
    "uninitialized_read": "read of unwritten memory",
    "budget_exceeded": "over budget",
    "technique_missing": "skips what the puzzle practises",
    "perf_target": "misses its performance target",
    "input_mutated": "wrote into its inputs",
    "wrong_shape": "output of the wrong shape",
    "not_finite": "NaN or infinite output",
    "wrong_output": "wrong output",
    "nondeterministic": "different answers on the same inputs",
}


@dataclass
class Failure:
    kind: str
    message: str
    config: str | None = None
    array: str | None = None
    index: tuple | None = None
    block: tuple | None = None
    thread: tuple | None = None
    other_thread: tuple | None = None
    line: int | None = None
    count: int = 1  # how many occurrences this one failure stands for
    details: list = field(default_factory=list)  # e.g. wrong cells: {index, expected, got, block, thread, line}
    rule: str | None = None  # the static screen's rule, for kind "static"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown failure kind {self.kind!r}")

    def to_json(self) -> dict:
        out = {"kind": self.kind, "message": self.message}
        for key in ("config", "array", "index", "block", "thread", "other_thread", "line", "rule"):
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        if self.count != 1:
            out["count"] = self.count
        if self.details:
            out["details"] = self.details
        return out


@dataclass
class ConfigResult:
    name: str
    threads: tuple
    blocks: tuple
    shapes: dict
    scalars: dict
    passed: bool
    random: bool = False
    kernel_ms: float | None = None  # GPU kernel time from CUDA events
    # the simulator's memory counters for this launch (counters.Counters.summary: ncu's metric
    # names, and the costliest lines); None on a GPU run, which gives no trace
    counters: dict | None = None

    def to_json(self) -> dict:
        out = {"name": self.name, "threads": list(self.threads), "blocks": list(self.blocks),
               "shapes": {k: list(v) for k, v in self.shapes.items()}, "scalars": self.scalars,
               "random": self.random, "passed": self.passed}
        if self.kernel_ms is not None:
            out["kernel_ms"] = self.kernel_ms
        if self.counters is not None:
            out["counters"] = self.counters
        return out


@dataclass
class ShapeMeasure:
    """What a coaching task's verification measured at one shape on the simulator: the global memory
    its kernels moved against the floor any correct kernel moves, and at the scored shape the
    modelled time (the optimiser's score) and the counters (shown, never scored)."""

    shape: list
    bytes: int
    floor: int
    scored: bool = False
    drawn: bool = False
    modelled_s: float | None = None
    floor_s: float | None = None
    modelled: list | None = None   # per kernel: the modelled time's terms
    counters: list | None = None   # per kernel: Counters.to_json()

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class GpuTiming:
    """A candidate timed on a GPU against the task's naive kernel, in the same process on the same inputs."""

    shape: list
    ms: float
    baseline_ms: float
    speedup: float
    runs: int
    host_enqueue_ms: float = 0.0
    baseline_host_enqueue_ms: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Verdict:
    """`passed` is derived from what was found, never assigned: a verdict passes when it judged at
    least one config, every config passed, and nothing failed. A judge that could not run every
    config it planned says so as a failure (a timeout that names the shape), not by a flag."""

    puzzle: str
    backend: Backend | str
    configs: list[ConfigResult] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "the compiler check was skipped: ..."
    seed: int | None = None
    printed: str = ""  # what the kernel printed
    # A coaching task's verification also measures: global memory moved per shape (simulator), the
    # GPU timing against the naive baseline, and flags for a human to review.
    measures: list[ShapeMeasure] = field(default_factory=list)
    timing: GpuTiming | None = None
    flags: list = field(default_factory=list)
    # A GPU check is judged twice, by the GPU's outputs and by the simulator's traced run of the
    # same inputs: `device` names the GPU, `device_passed` says whether its outputs were right.
    device: str = ""
    device_passed: bool | None = None
    # lines of the candidate's kernels and launch that ran in no verified shape (a task's verdict)
    unchecked_lines: list[int] = field(default_factory=list)

    def __post_init__(self):
        self.backend = Backend(self.backend)
        if isinstance(self.timing, dict):
            self.timing = GpuTiming(**self.timing)
        self.measures = [ShapeMeasure(**m) if isinstance(m, dict) else m for m in self.measures]

    @property
    def passed(self) -> bool:
        return bool(self.configs) and not self.failures and all(c.passed for c in self.configs)

    def sort(self) -> None:
        order = {k: i for i, k in enumerate(KINDS)}
        self.failures.sort(key=lambda f: order[f.kind])

    def to_json(self) -> dict:
        out = {"puzzle": self.puzzle, "backend": str(self.backend), "passed": self.passed,
               "configs": [c.to_json() for c in self.configs],
               "failures": [f.to_json() for f in self.failures]}
        if self.notes:
            out["notes"] = self.notes
        if self.seed is not None:
            out["seed"] = self.seed
        if self.printed:
            out["printed"] = self.printed
        if self.measures:
            out["global_bytes"] = [m.to_json() for m in self.measures]
        if self.timing is not None:
            out["timing"] = self.timing.to_json()
        for key in ("flags", "device", "unchecked_lines"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.device_passed is not None:
            out["device_passed"] = self.device_passed
        return out

    def kinds(self) -> list[str]:
        return [f.kind for f in self.failures]


@dataclass
class ConfigRun:
    """One launch as the UI needs it: the inputs, the answer, what the kernel wrote, the trace."""

    config: LaunchConfig  # tutor.puzzles.LaunchConfig
    inputs: dict
    expected: np.ndarray | None  # held by the judge; None in the child that ran the kernel
    got: np.ndarray | None
    trace: object | None = None
    failures: list = field(default_factory=list)
    seconds: float = 0.0
    timed: np.ndarray | None = None  # on a GPU: the output of every timed run, stacked, for the judge
    # What the checks found, for the views to draw without deciding anything again: every thread on
    # either side of a race (the simulator's child, beside detect.races), and the cells of `out` the
    # judge found wrong at the puzzle's own tolerance (None: not compared, e.g. the run stopped).
    raced: list = field(default_factory=list)
    bad: np.ndarray | None = None


@dataclass
class CheckResult:
    verdict: Verdict
    runs: list[ConfigRun] = field(default_factory=list)


def failure_from_dict(d: dict, config: str | None = None) -> Failure:
    known = {k: v for k, v in d.items() if k in Failure.__dataclass_fields__}
    if config is not None and known.get("config") is None:
        known["config"] = config
    return Failure(**known)


__all__ = ["KINDS", "KIND_TITLES", "Backend", "Failure", "ConfigResult", "ShapeMeasure", "GpuTiming", "Verdict",
           "ConfigRun", "CheckResult", "failure_from_dict", "asdict"]
