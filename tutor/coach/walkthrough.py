"""A coaching task's walkthrough: from the naive kernel to the expert one, a change at a time, each
step a whole kernel file that verifies, with what it buys as measured on a GPU.

The steps live in `kernels/TASK/walkthrough.toml` (`intro`, then one `[[step]]` per kernel file:
`file`, `title`, `why`), the kernels beside the task's (`naive.py`, `steps/*.py`, `expert.py`).
What each step costs is measured, never written by hand: `bench/walkthrough.py` times every step
on a GPU, each checked against the reference first, and writes `kernels/TASK/walkthrough-times.json`
({"runs": [{"device", "date", "shape", "command", "ms": {file: milliseconds}}]}). A walkthrough
with no measurement yet says so rather than guess. Learners read it once the task is theirs (the
expert kernel's screen, `gpu-tutor walkthrough TASK`); the performance track's lessons point here.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from tutor.sourcelines import unified_diff

TIMES_FILE = "walkthrough-times.json"
STEPS_FILE = "walkthrough.toml"


@dataclass
class Step:
    file: str      # relative to the task's folder
    title: str
    why: str       # what the change is and what it buys, in words
    source: str


@dataclass
class Measured:
    device: str
    date: str
    shape: list
    command: str
    ms: dict       # file -> median milliseconds


@dataclass
class Walkthrough:
    task: str
    title: str
    intro: str
    steps: list[Step]
    runs: list[Measured] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # what could not be read in the times file

    def text(self, diffs: bool = True, level: int = 1) -> str:
        """The walkthrough as Markdown: the intro, the measured table, then each step with its change;
        its title a heading of `level`, each step's one level below (to sit inside another page)."""
        out = [f"{'#' * level} {self.title}: from the naive kernel to the expert one", "", self.intro.strip(), ""]
        out += self.table()
        previous = None
        for n, step in enumerate(self.steps):
            out += ["", f"{'#' * (level + 1)} {n}. {step.title}", "", f"`kernels/{self.task}/{step.file}`", "",
                    step.why.strip()]
            measured = self.measured_line(step, previous)
            if measured:
                out += ["", measured]
            if diffs and previous is not None:
                diff = unified_diff(previous.source, step.source, previous.file, step.file)
                out += ["", "```diff", diff.rstrip("\n"), "```"]
            elif diffs:
                out += ["", "```python", step.source.rstrip("\n"), "```"]
            previous = step
        return "\n".join(out) + "\n"

    def table(self) -> list[str]:
        if not self.runs:
            return ["Not measured on a GPU yet: `bench/walkthrough.py` times every step on one "
                    "(each checked against the reference first) and writes the times here."]
        heads = " | ".join(f"{r.device} ms" for r in self.runs)
        out = [f"| step | {heads} | vs naive ({self.runs[0].device}) |",
               "|---" * (len(self.runs) + 2) + "|"]
        first = self.runs[0].ms.get(self.steps[0].file) if self.steps else None
        for n, step in enumerate(self.steps):
            cells = [f"{r.ms[step.file]:.4g}" if step.file in r.ms else "-" for r in self.runs]
            mine = self.runs[0].ms.get(step.file)
            speed = f"{first / mine:.3g}x" if first and mine else "-"
            out.append(f"| {n}. {step.title} | {' | '.join(cells)} | {speed} |")
        run = self.runs[0]
        out += ["", f"Measured at shape {tuple(run.shape)}, {run.date}, with `{run.command}`: CUDA events, "
                    "L2 flushed before each run, the median."]
        return out

    def measured_line(self, step: Step, previous: Step | None) -> str:
        parts = []
        for run in self.runs:
            ms = run.ms.get(step.file)
            if ms is None:
                continue
            said = f"{ms:.4g} ms on {run.device}"
            before = run.ms.get(previous.file) if previous is not None else None
            if before:
                said += f" ({before / ms:.3g}x the step before)"
            parts.append(said)
        return ("Measured: " + "; ".join(parts) + ".") if parts else ""


def walkthrough_markdown(task, level: int = 3) -> str:
    """The task's walkthrough as Markdown to sit inside a screen's page (its title a heading of
    `level`), or "" where it has none."""
    walk = load_walkthrough(task)
    return walk.text(level=level) if walk is not None else ""


def load_walkthrough(task) -> Walkthrough | None:
    """The task's walkthrough, or None where it has none. A step whose file is missing is an error
    (`gpu-tutor content check` and the tests read every walkthrough)."""
    path = Path(task.folder) / STEPS_FILE
    if not path.is_file():
        return None
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    steps = []
    for spec in data.get("step", []):
        file = str(spec["file"])
        source_path = (Path(task.folder) / file).resolve()
        if Path(task.folder).resolve() not in source_path.parents:
            raise ValueError(f"{path}: step file {file!r} is outside the task's folder")
        steps.append(Step(file, str(spec["title"]), str(spec.get("why", "")),
                          source_path.read_text(encoding="utf-8")))
    runs, problems = _measured(Path(task.folder) / TIMES_FILE, {s.file for s in steps})
    return Walkthrough(task.name, task.title, str(data.get("intro", "")), steps, runs, problems)


def _measured(path: Path, files: set) -> tuple[list[Measured], list[str]]:
    if not path.is_file():
        return [], []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        runs = []
        for r in data["runs"]:
            ms = {str(k): float(v) for k, v in r["ms"].items() if k in files and float(v) > 0}
            runs.append(Measured(str(r["device"]), str(r["date"]), list(r["shape"]), str(r["command"]), ms))
        return runs, []
    except (ValueError, KeyError, TypeError) as e:
        return [], [f"{path.name} could not be read ({type(e).__name__}: {e}); no times are shown"]
