"""A puzzle's configs and spec against a learner's file: the Verdict, and the traces behind it.

Every check runs the puzzle's fixed configs and a few random ones (fresh values, random sizes that
follow the puzzle's launch rule), so an answer hard-coded to the example fails. This runs inside the
runner's child process; the parent only ever sees the returned CheckResult.
"""

from __future__ import annotations

import io
import secrets
import time
from contextlib import redirect_stdout
from dataclasses import dataclass, field

import numpy as np

from ..puzzles import LaunchConfig, Puzzle
from . import detect
from .loader import LoadError, load_for_sim
from .verdict import ConfigResult, Failure, Verdict, failure_from_dict

N_RANDOM = 3
MAX_PRINTED = 4000


@dataclass
class ConfigRun:
    """One launch as the UI needs it: the inputs, the answer, what the kernel wrote, the trace."""

    config: LaunchConfig
    inputs: dict
    expected: np.ndarray
    got: np.ndarray | None
    trace: object | None = None
    failures: list = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class CheckResult:
    verdict: Verdict
    runs: list[ConfigRun] = field(default_factory=list)


def configs_for(puzzle: Puzzle, seed: int, n_random: int = N_RANDOM) -> list[LaunchConfig]:
    rng = np.random.default_rng(seed)
    configs = list(puzzle.configs)
    for n in range(n_random):
        configs.append(puzzle.random_config(rng, n + 1))
    return configs


def make_inputs(puzzle: Puzzle, config: LaunchConfig, rng) -> tuple[dict, np.ndarray]:
    """Fresh input values for one config, and the answer. Values are small integers (sums compare
    exactly); an all-zero answer is redrawn, since a kernel that writes nothing would pass it."""
    spec = puzzle.spec_module()
    for _ in range(8):
        if hasattr(spec, "make_inputs"):
            arrays = dict(spec.make_inputs(rng, {k: tuple(v) for k, v in config.shapes.items()},
                                           dict(config.scalars)))
        else:
            arrays = {}
            for name, shape in config.shapes.items():
                if name == "out":
                    continue
                dtype = np.dtype(config.dtype(name))
                if dtype.kind == "f":
                    arrays[name] = rng.integers(-9, 10, size=shape).astype(dtype)
                else:
                    arrays[name] = rng.integers(0, 10, size=shape).astype(dtype)
        inputs = {}
        for name in puzzle.signature[1:]:
            if name in arrays:
                inputs[name] = np.ascontiguousarray(arrays[name])
            elif name in config.scalars:
                inputs[name] = int(config.scalars[name])
            else:
                raise ValueError(f"{puzzle.id}: no value for parameter '{name}' in config '{config.name}'")
        expected = np.asarray(spec.spec(**{k: (v.copy() if isinstance(v, np.ndarray) else v)
                                           for k, v in inputs.items()}))
        out_shape = tuple(config.shapes["out"])
        if expected.shape != out_shape:
            expected = expected.reshape(out_shape) if expected.size == int(np.prod(out_shape)) else expected
        if np.any(expected != 0):
            break
    return inputs, expected


def fresh_output(config: LaunchConfig) -> np.ndarray:
    return np.zeros(tuple(config.shapes["out"]), dtype=np.dtype(config.dtype("out")))


def arg_types(puzzle: Puzzle, config: LaunchConfig) -> list[tuple]:
    types = []
    for name in puzzle.signature:
        if name in config.shapes:
            types.append(("array", config.dtype(name), len(config.shapes[name])))
        else:
            types.append(("int",))
    return types


def check_sim(puzzle: Puzzle, source: str, filename: str = "kernel.py", *, seed: int | None = None,
              n_random: int = N_RANDOM, timeout: float = 10.0, compile: bool = True,
              keep_traces: bool = True, compile_first: bool = False) -> CheckResult:
    """Check a learner's file on our simulator: every config traced, every detection run.

    `compile_first`: for code a model wrote (a hint, an optimiser candidate), nothing runs until the
    real Numba compiler has accepted the kernel: its nopython subset has no frames, modules or
    objects, which closes what plain Python on the simulator would leave open."""
    from .sim import Launch, watchdog

    seed = secrets.randbits(31) if seed is None else seed
    verdict = Verdict(puzzle=puzzle.id, backend="sim", passed=False, seed=seed)
    result = CheckResult(verdict)
    if compile_first:
        refusal = _compile_before_running(puzzle, source, filename)
        if refusal is not None:
            verdict.failures.append(refusal)
            return result
        compile = False  # done
    try:
        module = load_for_sim(source, filename, puzzle.signature)
    except LoadError as e:
        verdict.failures.append(Failure(kind=e.kind, message=e.message, line=e.line))
        return result
    configs = configs_for(puzzle, seed, n_random)
    rng = np.random.default_rng(seed + 1)
    printed = io.StringIO()
    current = [None]
    deadline = time.monotonic() + timeout
    with watchdog(timeout, lambda: current[0]):
        for config in configs:
            inputs, expected = make_inputs(puzzle, config, rng)
            out = fresh_output(config)
            named = [("out", out)] + [(k, v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()]
            started = time.perf_counter()
            launch = Launch(module.kernel, config.blocks, config.threads, named,
                            source_lines=module.lines, filename=filename)
            current[0] = launch
            with redirect_stdout(printed):
                trace = launch.run()
            trace.printed = printed.getvalue()[:MAX_PRINTED]
            failures = [failure_from_dict(f, config.name) for f in launch.failures]
            failures += detect.find_all(trace, config.name, puzzle.budget_for(config))
            stopped = any(f.kind in ("runtime_error", "timeout", "unsupported") for f in failures)
            if not stopped or not failures:
                failures += detect.wrong_output(trace, config.name, expected, out, puzzle.tolerance)
            run = ConfigRun(config, inputs, expected, out, trace if keep_traces else None, failures,
                            time.perf_counter() - started)
            result.runs.append(run)
            verdict.failures += failures
            verdict.configs.append(_config_result(config, not failures))
            if any(f.kind == "timeout" for f in failures) or time.monotonic() > deadline:
                break
    verdict.printed = printed.getvalue()[:MAX_PRINTED]
    if compile:
        from .compile import compile_check, nvvm_missing

        missing = nvvm_missing()
        if missing:
            verdict.notes.append(missing)
        else:
            failure = compile_check(source, filename, puzzle.signature, arg_types(puzzle, puzzle.configs[0]))
            if failure is not None:
                verdict.failures.insert(0, failure)
    verdict.failures = fold(verdict.failures)
    verdict.passed = not verdict.failures and len(verdict.configs) == len(configs)
    verdict.sort()
    return result


def _compile_before_running(puzzle: Puzzle, source: str, filename: str) -> Failure | None:
    from .compile import compile_check, nvvm_missing

    missing = nvvm_missing()
    if missing:
        return Failure(kind="compile_error", message=(
            "Model-written code runs only after the real Numba compiler has accepted it, and "
            f"{missing.removeprefix('the real-compiler check was skipped: ')}"))
    for config in puzzle.configs[:1] + [c for c in puzzle.configs[1:] if arg_types(puzzle, c) !=
                                        arg_types(puzzle, puzzle.configs[0])]:
        failure = compile_check(source, filename, puzzle.signature, arg_types(puzzle, config))
        if failure is not None:
            return failure
    return None


def simulate(source: str, blocks, threads, named_args: list, *, filename: str = "kernel.py",
             budget: dict | None = None, timeout: float = 10.0):
    """Run any kernel file once on the simulator: (trace, failures). For tests, the verifier and
    anything else that is not a puzzle. named_args: [(name, numpy array or int), ...]; the arrays
    receive what the kernel wrote."""
    from .sim import Launch, watchdog

    module = load_for_sim(source, filename)
    launch = Launch(module.kernel, blocks, threads, named_args, source_lines=module.lines, filename=filename)
    with watchdog(timeout, lambda: launch):
        trace = launch.run()
    failures = [failure_from_dict(f) for f in launch.failures]
    failures += detect.find_all(trace, None, budget)
    return trace, failures


def fold(failures: list[Failure]) -> list[Failure]:
    """The same mistake in several configs reads once: keep its first occurrence, name the others."""
    seen: dict = {}
    out = []
    for f in failures:
        key = (f.kind, f.array, f.line)
        if key in seen:
            first = seen[key]
            if f.config and f.config != first.config:
                first.details = first.details or []
                also = [d for d in first.details if "also_in" in d]
                if also:
                    if f.config not in also[0]["also_in"]:
                        also[0]["also_in"].append(f.config)
                else:
                    first.details.append({"also_in": [f.config]})
            continue
        seen[key] = f
        out.append(f)
    return out


def _config_result(config: LaunchConfig, passed: bool, kernel_ms=None) -> ConfigResult:
    return ConfigResult(config.name, config.threads, config.blocks, dict(config.shapes), dict(config.scalars),
                        passed, config.random, kernel_ms)
