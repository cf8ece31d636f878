"""The one answer every backend gives: passed or not, and each failure in plain words.

A Verdict is JSON-serialisable as it stands; the CLI prints it, the app draws it, the hint and the
optimiser read it. Failures carry where they happened (config, array, index, block, thread, line)
so that every consumer can point at the same place.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

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
class Verdict:
    puzzle: str
    backend: str
    passed: bool
    configs: list[ConfigResult] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "the compiler check was skipped: ..."
    seed: int | None = None
    printed: str = ""  # what the kernel printed
    # A coaching task's verification also measures: global memory moved per shape (simulator), the
    # GPU timing against the naive baseline, and flags for a human to review.
    global_bytes: list = field(default_factory=list)  # [{"shape": [...], "bytes": n}]
    timing: dict | None = None
    flags: list = field(default_factory=list)
    # A GPU check is judged twice, by the GPU's outputs and by the simulator's traced run of the
    # same inputs: `device` names the GPU, `device_passed` says whether its outputs were right.
    device: str = ""
    device_passed: bool | None = None

    def sort(self) -> None:
        order = {k: i for i, k in enumerate(KINDS)}
        self.failures.sort(key=lambda f: order[f.kind])

    def to_json(self) -> dict:
        out = {"puzzle": self.puzzle, "backend": self.backend, "passed": self.passed,
               "configs": [c.to_json() for c in self.configs],
               "failures": [f.to_json() for f in self.failures]}
        if self.notes:
            out["notes"] = self.notes
        if self.seed is not None:
            out["seed"] = self.seed
        if self.printed:
            out["printed"] = self.printed
        for key in ("global_bytes", "timing", "flags", "device"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.device_passed is not None:
            out["device_passed"] = self.device_passed
        return out

    def kinds(self) -> list[str]:
        return [f.kind for f in self.failures]


def failure_from_dict(d: dict, config: str | None = None) -> Failure:
    known = {k: v for k, v in d.items() if k in Failure.__dataclass_fields__}
    if config is not None and known.get("config") is None:
        known["config"] = config
    return Failure(**known)


__all__ = ["KINDS", "KIND_TITLES", "Failure", "ConfigResult", "Verdict", "failure_from_dict", "asdict"]
