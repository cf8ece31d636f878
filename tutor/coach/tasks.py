"""Coaching tasks as data under kernels/: the maths, the inputs, the tolerance, the baselines.

Like puzzles, a task is a folder the code knows nothing particular about; its reference and input
generator are our own trusted numpy code, loaded only when a verification needs them.
"""

from __future__ import annotations

import importlib.util
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

KERNELS_ENV = "GPU_TUTOR_KERNELS"


def kernels_dir() -> Path:
    env = os.environ.get(KERNELS_ENV)
    return Path(env) if env else Path(__file__).resolve().parents[2] / "kernels"


@dataclass
class Task:
    name: str
    folder: Path
    data: dict

    @property
    def title(self) -> str:
        return self.data.get("title", self.name)

    @property
    def statement(self) -> str:
        """The maths in words, with the inputs and the output, as a model or a learner reads it."""
        parts = [self.data.get("statement", "").strip()]
        for spec in self.data.get("inputs", []):
            parts.append(f"- input `{spec['name']}`: {spec.get('dtype', 'float32')}, shape {spec.get('shape', '?')}")
        if self.data.get("output"):
            parts.append(f"- output: {self.data['output']}")
        return "\n".join(p for p in parts if p)

    @property
    def tolerance(self) -> tuple[float, float]:
        """(rtol, atol) from `tolerance = {rtol, atol}`, `tolerance = x` or top-level rtol/atol."""
        tol = self.data.get("tolerance", {})
        if isinstance(tol, (int, float)):
            return float(tol), float(tol)
        rtol = tol.get("rtol", self.data.get("rtol", 1e-4))
        atol = tol.get("atol", self.data.get("atol", 1e-4))
        return float(rtol), float(atol)

    def shapes(self, backend: str) -> list[tuple]:
        key = "gpu_shapes" if backend == "gpu" else "sim_shapes"
        return [tuple(s) if isinstance(s, (list, tuple)) else (s,) for s in self.data.get(key, [])]

    def random_shapes(self, rng) -> list[tuple]:
        """One shape per `[[sim_random]]` rule of task.toml, drawn with `rng`: each dimension of
        `shape_names` uniformly from its inclusive `[low, high]`, never a multiple of the rule's
        `not_multiple_of` where it has one. The rules put the simulator past every tile and window
        a kernel might assume, which the small fixed shapes never reach."""
        names = list(self.data.get("shape_names", []))
        return [_draw_shape(self.name, names, rule, rng) for rule in self.data.get("sim_random", [])]

    def scored_shape(self) -> tuple | None:
        """Where the simulator's score, the modelled time, is taken (`sim_scored`): one fixed shape,
        so the baseline and every candidate are measured on the same work. None when the task has
        none."""
        s = self.data.get("sim_scored")
        if s is None:
            return None
        return tuple(s) if isinstance(s, (list, tuple)) else (s,)

    def floor_bytes(self, shape) -> int:
        """The fewest bytes of global memory any correct kernel moves at `shape`: every input read
        once and every output element written once. Our tasks need every input element (a
        reduction, a row statistic, every key of some query), so fewer is impossible."""
        import math

        import numpy as np

        inputs = self.module("inputs")
        made = inputs.make_inputs(np.random.default_rng(0), tuple(shape))
        return sum(int(np.asarray(x).nbytes) for x in made) + 4 * math.prod(inputs.output_shape(tuple(shape)))

    def largest_shape(self, backend: str = "gpu") -> tuple:
        """The shape with the most elements: where timing means bandwidth, not launch overhead."""
        import math

        return max(self.shapes(backend), key=math.prod)

    def module(self, name: str):
        path = self.folder / f"{name}.py"
        spec = importlib.util.spec_from_file_location(f"gpu_tutor_task_{self.name}_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    def source(self, name: str) -> str:
        return (self.folder / f"{name}.py").read_text(encoding="utf-8")


def load_task(name: str, root: Path | None = None) -> Task:
    root = Path(root) if root else kernels_dir()
    folder = root / name
    if not (folder / "task.toml").is_file():
        raise KeyError(f"unknown task '{name}'; known tasks: {', '.join(_task_names(root))}")
    with open(folder / "task.toml", "rb") as f:
        return Task(name, folder, tomllib.load(f))


def coaching_tasks(root: Path | None = None) -> list[Task]:
    """Every coaching task (a folder of kernels/ with a task.toml), by name: the one list the CLI
    and the app offer."""
    root = Path(root) if root else kernels_dir()
    return [load_task(name, root) for name in _task_names(root)]


def _task_names(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if (p / "task.toml").is_file()) if root.is_dir() else []


def _draw_shape(task: str, names: list[str], rule: dict, rng) -> tuple:
    """One shape from a `[[sim_random]]` rule; a rule that does not fit `shape_names` is an error."""
    step = int(rule.get("not_multiple_of", 0))
    ranges = {k: v for k, v in rule.items() if k != "not_multiple_of"}
    if not names or set(ranges) != set(names):
        raise ValueError(f"{task}/task.toml: a [[sim_random]] rule must give a range for each of shape_names "
                         f"{names}, got {sorted(ranges)}")
    shape = []
    for name in names:
        low, high = (int(v) for v in ranges[name])
        allowed = [v for v in range(max(1, low), high + 1) if step < 2 or v % step]
        if not allowed:
            raise ValueError(f"{task}/task.toml: sim_random's {name} = [{low}, {high}] leaves no size to draw")
        shape.append(allowed[int(rng.integers(len(allowed)))])
    return tuple(shape)
