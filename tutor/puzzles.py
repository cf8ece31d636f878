"""Puzzles as the rest of the program sees them, loaded from the data folders under content/.

Loading never imports numba: the app lists puzzles at start-up and must stay fast. A puzzle's spec
(numpy reference and random-config rule) is our own trusted code, imported from its folder only when
a check needs it. Every defect in a folder is reported with the file and key that hold it.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

CONTENT_ENV = "GPU_TUTOR_CONTENT"
FILES = ("puzzle.toml", "lesson.md", "starter.py", "reference.py", "spec.py", "learned.md")
DTYPES = ("float32", "float64", "int32", "int64", "uint32")


class ContentError(Exception):
    """A puzzle folder or the manifest is malformed; the message names the file and the key."""


def content_dir() -> Path:
    env = os.environ.get(CONTENT_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "content"


@dataclass
class LaunchConfig:
    """One launch of a puzzle's kernel: its shapes, its integer parameters, its grid."""

    name: str
    threads: tuple
    blocks: tuple
    shapes: dict
    scalars: dict = field(default_factory=dict)
    dtypes: dict = field(default_factory=dict)
    random: bool = False

    def dtype(self, array: str) -> str:
        return self.dtypes.get(array, "float32")

    def to_json(self) -> dict:
        return {"name": self.name, "threads": list(self.threads), "blocks": list(self.blocks),
                "shapes": {k: list(v) for k, v in self.shapes.items()}, "scalars": dict(self.scalars),
                "random": self.random}


@dataclass
class Puzzle:
    id: str
    title: str
    summary: str
    track: str
    signature: list[str]
    constants: dict
    budget: dict
    hints: list[str]
    configs: list[LaunchConfig]
    folder: Path
    tolerance: float = 1e-5
    # what a passing kernel must also do, judged on its trace (FORMAT.md [require]); empty: nothing
    require: dict = field(default_factory=dict)
    # the counters a passing kernel must meet, on every config (FORMAT.md [perf]); empty: none
    perf: dict = field(default_factory=dict)
    # the useful floating-point operations of one launch, an expression (FORMAT.md [perf] flops);
    # the trace sees memory, not arithmetic, so intensity needs the puzzle's word for its work
    flops: str | int | None = None

    # -- files ----------------------------------------------------------------------------------
    def read(self, name: str) -> str:
        return (self.folder / name).read_text(encoding="utf-8")

    @property
    def lesson(self) -> str:
        """lesson.md, then the budgets the checker enforces, written out from [budget] so that a
        learner reads every cap before a verdict quotes it."""
        return self.read("lesson.md").rstrip() + "\n" + self.budget_text()

    def budget_text(self) -> str:
        if not self.budget:
            return ""
        said = {"global_reads": "global memory reads per thread", "global_writes": "global memory writes per thread",
                "shared_size": "elements of shared memory per block (all its shared arrays together)"}
        first = self.configs[0]
        names = dict(self.constants)
        lines = ["", "## Budgets the checker enforces", ""]
        for key, value in self.budget.items():
            expr = str(value)
            size = self.budget_for(first)[key]
            how = f"`{expr}`, {size} in config '{first.name}'" if not isinstance(value, int) else f"{size}"
            lines.append(f"- at most {how}: {said[key]}")
        if names:
            lines += ["", "(" + ", ".join(f"{k} = {v}" for k, v in names.items()) + ")"]
        return "\n".join(lines) + "\n"

    @property
    def starter(self) -> str:
        return self.read("starter.py")

    @property
    def reference(self) -> str:
        return self.read("reference.py")

    @property
    def learned(self) -> str:
        return self.read("learned.md")

    @property
    def arrays(self) -> list[str]:
        return [n for n in self.signature if n in self.configs[0].shapes]

    @property
    def scalars(self) -> list[str]:
        return [n for n in self.signature if n not in self.configs[0].shapes]

    # -- spec -----------------------------------------------------------------------------------
    def spec_module(self):
        cached = _SPECS.get(self.folder)
        if cached is not None:
            return cached
        path = self.folder / "spec.py"
        spec = importlib.util.spec_from_file_location(f"gpu_tutor_spec_{self.id}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _SPECS[self.folder] = module
        return module

    def budget_for(self, config: LaunchConfig) -> dict:
        """The per-thread budget with expressions evaluated for this config's sizes."""
        names = dict(self.constants)
        names.update(config.scalars)
        out = {}
        for key, value in self.budget.items():
            out[key] = int(_evaluate(value, names, f"{self.id}/puzzle.toml [budget] {key}"))
        return out

    def sizes(self, config: LaunchConfig) -> dict:
        """The names a [perf] expression may use: constants, scalars, and the launch's totals."""
        names = dict(self.constants)
        names.update(config.scalars)
        threads, blocks = math.prod(config.threads), math.prod(config.blocks)
        names.update(threads=threads, blocks=blocks, warps=blocks * -(-threads // 32))
        return names

    def perf_for(self, config: LaunchConfig) -> dict:
        """The [perf] targets with expressions evaluated for this config: name -> number."""
        names = self.sizes(config)
        return {key: float(_evaluate(value, names, f"{self.id}/puzzle.toml [perf] {key}"))
                for key, value in self.perf.items()}

    def flops_for(self, config: LaunchConfig) -> float | None:
        if self.flops is None:
            return None
        return float(_evaluate(self.flops, self.sizes(config), f"{self.id}/puzzle.toml [perf] flops"))

    def random_config(self, rng, n: int) -> LaunchConfig:
        raw = self.spec_module().random_config(rng)
        return _config(raw, f"random config {n}", f"{self.id}/spec.py random_config", random=True)


@dataclass
class Track:
    id: str
    title: str
    description: str
    puzzles: list[str]


@dataclass
class Catalog:
    tracks: list[Track]
    puzzles: dict[str, Puzzle]

    def ordered(self) -> list[Puzzle]:
        return [self.puzzles[p] for t in self.tracks for p in t.puzzles]

    def ids(self) -> list[str]:
        """The puzzle ids in order, without loading any puzzle."""
        return [p for t in self.tracks for p in t.puzzles]

    def get(self, puzzle_id: str) -> Puzzle:
        try:
            return self.puzzles[puzzle_id]
        except KeyError:
            known = ", ".join(p.id for p in self.ordered())
            raise KeyError(f"unknown puzzle '{puzzle_id}'; known puzzles: {known}") from None


class _OnDemand(dict):
    """Puzzle folders read when first asked for: the app starts with one puzzle parsed, not all."""

    def __init__(self, folders: dict):
        super().__init__()
        self._folders = folders

    def __missing__(self, pid):
        if pid not in self._folders:
            raise KeyError(pid)
        folder, track = self._folders[pid]
        puzzle = self[pid] = load_puzzle(folder, track)
        return puzzle

    def __contains__(self, pid):
        return pid in self._folders

    def get(self, pid, default=None):
        return self[pid] if pid in self._folders else default


def load_catalog(root: Path | None = None, *, on_demand: bool = False) -> Catalog:
    """Every puzzle, validated now; or, with on_demand, each when first used (the app's start)."""
    root = Path(root) if root else content_dir()
    manifest = root / "manifest.toml"
    data = _toml(manifest)
    tracks = []
    folders = {}
    for n, raw in enumerate(data.get("tracks", [])):
        where = f"{manifest.name} tracks[{n}]"
        for key in ("id", "title", "puzzles"):
            if key not in raw:
                raise ContentError(f"{where}: missing key '{key}'")
        track = Track(raw["id"], raw["title"], raw.get("description", ""), list(raw["puzzles"]))
        for pid in track.puzzles:
            if pid in folders:
                raise ContentError(f"{where}: puzzle '{pid}' is listed twice in the manifest")
            folders[pid] = (root / pid, track.id)
        tracks.append(track)
    if not tracks:
        raise ContentError(f"{manifest}: no [[tracks]] defined")
    if on_demand:
        return Catalog(tracks, _OnDemand(folders))
    return Catalog(tracks, {pid: load_puzzle(folder, track) for pid, (folder, track) in folders.items()})


def load_puzzle(folder: Path, track: str = "") -> Puzzle:
    pid = folder.name
    if not folder.is_dir():
        raise ContentError(f"{pid}: the manifest names it but there is no folder {folder}")
    for name in FILES:
        if not (folder / name).is_file():
            raise ContentError(f"{pid}/{name}: missing")
    data = _toml(folder / "puzzle.toml")
    where = f"{pid}/puzzle.toml"
    for key in ("title", "signature", "configs", "hints"):
        if key not in data:
            raise ContentError(f"{where}: missing key '{key}'")
    signature = list(data["signature"])
    if not signature or signature[0] != "out":
        raise ContentError(f"{where}: signature must start with 'out', got {signature}")
    constants = dict(data.get("constants", {}))
    for k, v in constants.items():
        if not isinstance(v, int):
            raise ContentError(f"{where}: constants.{k} must be an integer, got {v!r}")
    hints = list(data["hints"])
    if len(hints) < 3:
        raise ContentError(f"{where}: hints needs at least 3 levels, got {len(hints)}")
    budget = dict(data.get("budget", {}))
    for key in budget:
        if key not in ("global_reads", "global_writes", "shared_size"):
            raise ContentError(f"{where}: [budget] {key} is not a budget (global_reads, global_writes, shared_size)")
    require = _requirements(data.get("require", {}), where)
    perf, flops = _perf_targets(data.get("perf", {}), where)
    configs = [_config(c, c.get("name", f"fixed config {i}"), f"{where} configs[{i}]")
               for i, c in enumerate(data["configs"])]
    if not configs:
        raise ContentError(f"{where}: at least one [[configs]] is needed")
    for c in configs:
        missing = [n for n in signature if n not in c.shapes and n not in c.scalars]
        if missing:
            raise ContentError(f"{where} config '{c.name}': no shape or scalar for {missing}")
    puzzle = Puzzle(
        id=pid, title=data["title"], summary=data.get("summary", ""), track=track, signature=signature,
        constants=constants, budget=budget, hints=hints, configs=configs, folder=folder,
        tolerance=float(data.get("tolerance", 1e-5)), require=require, perf=perf, flops=flops,
    )
    for c in configs:  # expressions must evaluate
        puzzle.budget_for(c)
        puzzle.perf_for(c)
        puzzle.flops_for(c)
    return puzzle


SHARED_USES = ("after_barrier", "from_other_threads")
REQUIREMENTS = ("shared", "out_cell_writes_per_block", "coalesced")


def _requirements(raw, where: str) -> dict:
    """The [require] table, checked: each key known, each value of its kind."""
    if not isinstance(raw, dict):
        raise ContentError(f"{where}: [require] must be a table, got {raw!r}")
    for key, value in raw.items():
        if key not in REQUIREMENTS:
            raise ContentError(f"{where}: [require] {key} is not a requirement ({', '.join(REQUIREMENTS)})")
        if key == "shared" and value not in SHARED_USES:
            raise ContentError(f"{where}: [require] shared = {value!r} must be one of {', '.join(map(repr, SHARED_USES))}")
        if key == "out_cell_writes_per_block" and (type(value) is not int or value < 1):
            raise ContentError(f"{where}: [require] out_cell_writes_per_block = {value!r} must be a whole number, 1 or more")
        if key == "coalesced" and type(value) is not bool:
            raise ContentError(f"{where}: [require] coalesced = {value!r} must be true or false")
    return dict(raw)


# [perf] targets: each counter's name and which way it must go ("min": at least, "max": at most).
# tutor/engine/analysis/perf_targets.py measures them; the names are here so loading stays free of numpy.
# Each is a total of the launch, against what its data needs where it is a ratio: a request split
# over lines, branches or barrier phases never meets one that the whole request misses.
PERF_TARGETS = {
    "global_load_efficiency": "min",   # sectors holding the elements loaded, over the sectors loads moved (1.0: each once)
    "global_store_efficiency": "min",  # the same for global stores
    "shared_extra_wavefronts": "max",  # shared wavefronts beyond the fewest its accesses need (bank conflicts, splits)
    "shared_lanes_per_request": "min",  # active lanes per shared-memory request (32: no lane idles)
    "shared_requests": "max",          # shared-memory requests (warp instructions), the whole launch
    "global_atomics": "max",           # atomic operations on global arrays, lane by lane
    "atomic_same_address": "max",      # the most global atomics one block makes on one address
    "arithmetic_intensity": "min",     # flops over the bytes of the global sectors served
}


def _perf_targets(raw, where: str) -> tuple[dict, str | int | None]:
    """The [perf] table, checked: (targets, flops). Values are numbers or expressions."""
    if not isinstance(raw, dict):
        raise ContentError(f"{where}: [perf] must be a table, got {raw!r}")
    targets = dict(raw)
    flops = targets.pop("flops", None)
    for key, value in targets.items():
        if key not in PERF_TARGETS:
            raise ContentError(f"{where}: [perf] {key} is not a counter target ({', '.join(PERF_TARGETS)}, or flops)")
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ContentError(f"{where}: [perf] {key} = {value!r} must be a number or an expression")
    if flops is not None and (isinstance(flops, bool) or not isinstance(flops, (int, str))):
        raise ContentError(f"{where}: [perf] flops = {flops!r} must be a whole number or an expression")
    if "arithmetic_intensity" in targets and flops is None:
        raise ContentError(f"{where}: [perf] arithmetic_intensity needs flops: the kernel's useful "
                           "floating-point operations (the trace does not see arithmetic)")
    return targets, flops


def _config(raw: dict, name: str, where: str, random: bool = False) -> LaunchConfig:
    for key in ("threads", "blocks", "shapes"):
        if key not in raw:
            raise ContentError(f"{where}: missing key '{key}'")
    threads = tuple(int(x) for x in raw["threads"])
    blocks = tuple(int(x) for x in raw["blocks"])
    for label, dim in (("threads", threads), ("blocks", blocks)):
        if not 1 <= len(dim) <= 3 or any(d < 1 for d in dim):
            raise ContentError(f"{where}: {label} must be 1 to 3 positive numbers, got {list(dim)}")
    shapes = {k: tuple(int(x) for x in v) for k, v in raw["shapes"].items()}
    if "out" not in shapes:
        raise ContentError(f"{where}: shapes must include 'out'")
    dtypes = dict(raw.get("dtypes", {}))
    for k, v in dtypes.items():
        if v not in DTYPES:
            raise ContentError(f"{where}: dtypes.{k} = {v!r} is not one of {', '.join(DTYPES)}")
    scalars = {k: int(v) for k, v in raw.get("scalars", {}).items()}
    return LaunchConfig(raw.get("name", name), threads, blocks, shapes, scalars, dtypes, random)


def _toml(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise ContentError(f"{path}: missing") from None
    except tomllib.TOMLDecodeError as e:
        raise ContentError(f"{path}: {e}") from None
    except (RecursionError, MemoryError):  # tomllib recurses once per nested array or table
        raise ContentError(f"{path}: arrays or tables are nested too deeply (thousands of levels) to be read; "
                           "write the values out flat") from None


_SPECS: dict = {}
_FUNCS = {"ceil": math.ceil, "min": min, "max": max}


def _evaluate(value, names: dict, where: str):
    """Evaluate a budget: a number, or a small arithmetic expression over sizes and constants."""
    if isinstance(value, (int, float)):
        return value
    if not isinstance(value, str):
        raise ContentError(f"{where}: expected a number or an expression, got {value!r}")
    try:
        tree = ast.parse(value, mode="eval")
    except SyntaxError:
        raise ContentError(f"{where}: cannot parse {value!r}") from None

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise ContentError(f"{where}: unknown name '{node.id}' in {value!r}")
            return names[node.id]
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.Div: lambda: a / b, ast.FloorDiv: lambda: a // b}
            for t, f in ops.items():
                if isinstance(node.op, t):
                    return f()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS:
            return _FUNCS[node.func.id](*[ev(a) for a in node.args])
        raise ContentError(f"{where}: {value!r} may only use numbers, names, + - * / // and ceil/min/max")

    return ev(tree)
