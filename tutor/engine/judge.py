"""A puzzle's configs and spec against a learner's file: the Verdict, and the traces behind it.

Every check runs the puzzle's fixed configs and a few random ones (fresh values, random sizes that
follow the puzzle's launch rule), so an answer hard-coded to the example fails. The judge holds the
answers: `plan` draws the inputs and computes them, `run_sim` (in the runner's child) runs the
kernel on the inputs alone, and `judge` compares what it wrote.
"""

from __future__ import annotations

import io
import secrets
import time
from contextlib import redirect_stdout
from dataclasses import dataclass

import numpy as np

from tutor.puzzles import LaunchConfig, Puzzle
from .analysis import detect, perf_targets
from .loading.loader import LoadError
from .verdict import KINDS, CheckResult, ConfigResult, ConfigRun, Failure, Verdict, failure_from_dict

N_RANDOM = 3
MAX_PRINTED = 4000


MAX_DRAWS = 20  # tries for a random config unlike the others before a repeat is kept


def configs_for(puzzle: Puzzle, seed: int, n_random: int = N_RANDOM) -> list[LaunchConfig]:
    """The fixed configs, then `n_random` drawn ones, each drawn again (up to MAX_DRAWS times) while
    it launches exactly like a config already in the run. A puzzle whose rule has fewer shapes than
    that (Map's random configs vary only the values) keeps the repeat, under a name of its own:
    its inputs are fresh all the same."""
    rng = np.random.default_rng(seed)
    configs = list(puzzle.configs)
    seen = {_launch_key(c) for c in configs}
    names = {c.name for c in configs}
    for n in range(n_random):
        for _ in range(MAX_DRAWS):
            config = puzzle.random_config(rng, n + 1)
            if _launch_key(config) not in seen:
                break
        seen.add(_launch_key(config))
        if config.name in names:
            config.name = f"{config.name}, new values"
            if config.name in names:
                config.name = f"{config.name} ({n + 1})"
        names.add(config.name)
        configs.append(config)
    return configs


def _launch_key(config: LaunchConfig) -> tuple:
    return (tuple(config.threads), tuple(config.blocks), tuple(sorted((k, tuple(v)) for k, v in config.shapes.items())),
            tuple(sorted(config.scalars.items())), tuple(sorted(config.dtypes.items())))


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


@dataclass
class Planned:
    """One config to run: its inputs, and its answer, which stays with the judge (the process
    that runs the kernel is sent the config and the inputs, never the answer)."""

    config: LaunchConfig
    inputs: dict
    expected: np.ndarray


def plan(puzzle: Puzzle, seed: int, n_random: int = N_RANDOM) -> list[Planned]:
    rng = np.random.default_rng(seed + 1)
    return [Planned(config, *make_inputs(puzzle, config, rng)) for config in configs_for(puzzle, seed, n_random)]


def check_sim(puzzle: Puzzle, source: str, filename: str = "kernel.py", *, seed: int | None = None,
              n_random: int = N_RANDOM, timeout: float = 10.0, compile: bool = True,
              keep_traces: bool = True, compile_first: bool | str = False) -> CheckResult:
    """Check a learner's file on our simulator, here: plan, run, judge (the runner does the same
    with the run in its child)."""
    seed = secrets.randbits(31) if seed is None else seed
    planned = plan(puzzle, seed, n_random)
    result = run_sim(puzzle, source, filename, [(p.config, p.inputs) for p in planned], seed=seed, timeout=timeout,
                     compile=compile, compile_first=compile_first)
    return judge(puzzle, result, planned, keep_traces=keep_traces)


def run_sim(puzzle: Puzzle, source: str, filename: str, configs: list, *, seed: int | None = None,
            timeout: float = 10.0, compile: bool = True, compile_first: bool | str = False) -> CheckResult:
    """Run every (config, inputs) on our simulator, traced, with every detection but the output's:
    the runs come back with what the kernel wrote, for `judge` to compare with the answers.

    `compile_first`: for untrusted code (a served room's learner's, or a model's: a hint, an optimiser
    candidate), the file is built from its syntax tree, not run (loader.execute), and no line of a
    kernel runs until the real Numba compiler has accepted it: its nopython subset has no frames,
    modules or objects, which closes what plain Python on the simulator would leave open. A text
    names whose code it is, for the message when the compiler is missing."""
    from .analysis.counters import count
    from .sim.launch import Launch, watchdog
    from .loading.sim_loader import load_for_sim

    verdict = Verdict(puzzle=puzzle.id, backend="sim", seed=seed)
    result = CheckResult(verdict)
    try:
        module = load_for_sim(source, filename, puzzle.signature, untrusted=bool(compile_first))
    except LoadError as e:
        verdict.failures += e.failures()
        return result
    if compile_first:
        whose = compile_first if isinstance(compile_first, str) else "Model-written code"
        refusal = _compile_before_running(puzzle, source, filename, whose)
        if refusal is not None:
            verdict.failures.append(refusal)
            return result
        compile = False  # done
    printed = io.StringIO()
    current = [None]
    deadline = time.monotonic() + timeout
    with watchdog(timeout, lambda: current[0]):
        for config, inputs in configs:
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
            # an endless kernel's trace runs to millions of events: its line is the lesson, and
            # judging or counting the rest would take longer than the learner's time limit
            spun = any(f.kind == "timeout" for f in failures)
            if not spun:
                failures += detect.find_all(trace, config.name, puzzle.budget_for(config), puzzle.require)
                verdict.notes += [n for n in detect.unjudged(trace, config.name, puzzle.require) if n not in verdict.notes]
            elif len(trace.events) > SPUN_EVENTS:  # and sending them all to the grid, too
                trace.events = trace.events[:SPUN_EVENTS]
                trace.uninit_used = trace.oob_code = None  # they index the events cut off
                trace.printed += f"\n[the trace is cut to its first {SPUN_EVENTS:,} accesses: the kernel never ended]"
            result.runs.append(ConfigRun(config, inputs, None, out, trace, failures, time.perf_counter() - started,
                                         raced=racing_of(trace, failures)))
            verdict.failures += failures
            verdict.configs.append(_config_result(config, not failures))
            if not spun:
                counted = count(trace, source)
                verdict.configs[-1].counters = counted.summary()
                if puzzle.perf:
                    verdict.configs[-1].counters["lens"] = perf_targets.measure(counted)
            if spun or time.monotonic() > deadline:
                break
    verdict.printed = printed.getvalue()[:MAX_PRINTED]
    if compile:
        add_compile_result(verdict, *compile_puzzle(puzzle, source, filename))
    return result


def racing_of(trace, failures: list[Failure]) -> list[int]:
    """Every thread of every race the detectors reported, for the grid (none when none was)."""
    return sorted(detect.racing_threads(trace)) if any(f.kind == "race" for f in failures) else []


def compile_puzzle(puzzle: Puzzle, source: str, filename: str, *,
                   untrusted: bool = False) -> tuple[Failure | None, str | None]:
    """The real Numba compiler's word on a learner's file: (its failure or None, a note when it
    could not be asked). The app asks it in a second child beside the simulator's run, the CLI in
    the run's own child; both merge it with add_compile_result."""
    from .loading.compile import compile_check, nvvm_missing

    missing = nvvm_missing()
    if missing:
        return None, missing
    return compile_check(source, filename, puzzle.signature, arg_types(puzzle, puzzle.configs[0]),
                         untrusted=untrusted), None


STOPPING = ("runtime_error", "timeout", "unsupported")
SPUN_EVENTS = 200_000  # of an endless kernel's trace, what the grid gets


def judge(puzzle: Puzzle, result: CheckResult, planned: list[Planned], *, keep_traces: bool = True) -> CheckResult:
    """The answers against what each run wrote (runs that stopped early with another failure are not
    also called wrong); then one failure per mistake, most important first. A run the child did not
    report, or an output of the wrong shape, fails: the child's word is not taken for it."""
    verdict = result.verdict
    for n, (run, p) in enumerate(zip(result.runs, planned)):
        run.expected, run.bad = p.expected, None  # the child's word on which cells are wrong is not taken
        stopped = any(f.kind in STOPPING for f in run.failures)
        if run.got is not None and (not stopped or not run.failures):
            run.bad = detect.bad_cells(p.expected, np.asarray(run.got), puzzle.tolerance)
            wrong = detect.wrong_output(run.trace, p.config.name, p.expected, np.asarray(run.got), puzzle.tolerance)
            if not wrong:
                wrong = _timed_differ(run, p, puzzle.tolerance)
            diverged = [f for f in run.failures if f.kind == "barrier_divergence"]
            if diverged and wrong and wrong[0].kind == "wrong_output":
                _as_consequence(diverged[0], wrong[0])  # the block stopped: its cells were never written
                wrong = []
            run.failures += wrong
            verdict.failures += wrong
        # counters come from the trace: the simulator's judge holds them (a GPU check's own sim run too)
        if puzzle.perf and verdict.backend == "sim" and not run.failures and n < len(verdict.configs):
            slow = perf_targets.missed(puzzle, p.config, (verdict.configs[n].counters or {}).get("lens"))
            run.failures += slow
            verdict.failures += slow
        if n < len(verdict.configs):
            verdict.configs[n].passed = not run.failures
        if not keep_traces:
            run.trace = None
    if puzzle.perf and verdict.backend == "sim":
        said = perf_targets.standing(puzzle, [p.config for p in planned], verdict.configs)
        if said and said not in verdict.notes:
            verdict.notes.append(said)
    if not verdict.failures and not (len(result.runs) == len(planned) == len(verdict.configs)):
        ran = min(len(result.runs), len(verdict.configs))
        verdict.failures.append(Failure(kind="timeout", config=planned[ran].config.name if ran < len(planned) else None,
                                        message=(f"Only {ran} of the {len(planned)} configs ran within the time "
                                                 "limit; a kernel is judged on all of them. Look for work that "
                                                 "grows faster than the data (a loop inside a loop over it).")))
    verdict.failures = fold(one_root_cause(verdict.failures))
    verdict.sort()
    return result


def _as_consequence(cause: Failure, wrong: Failure) -> None:
    """Cells a diverged block never wrote are what its stop left behind, told under the divergence."""
    unwritten = sum(1 for d in wrong.details if d.get("unwritten"))
    what = f"{wrong.count} cell(s) of {wrong.array or 'out'} are wrong" + \
        (f", {unwritten} of them never written," if unwritten else "")
    cause.message += f" Because the block stopped there, {what} in this config: fix the barrier first."
    cause.details = (cause.details or []) + [{"consequence": wrong.to_json()}]


def _timed_differ(run: ConfigRun, p: Planned, tolerance: float) -> list[Failure]:
    """The GPU's timed runs must write the answer too: a kernel that does less once `out` holds
    numbers would otherwise be judged on one run and timed on another."""
    if run.timed is None:
        return []
    timed = np.asarray(run.timed)
    if timed.ndim != p.expected.ndim + 1 or timed.shape[1:] != p.expected.shape:
        return [Failure(kind="nondeterministic", config=p.config.name, array="out",
                        message="The timed runs did not report an output of the right shape.")]
    for n, out in enumerate(timed):
        wrong = detect.wrong_output(None, p.config.name, p.expected, out, tolerance)  # the judged run's rule
        if wrong:
            bad = wrong[0].count
            return [Failure(kind="nondeterministic", config=p.config.name, array="out", count=bad,
                            message=(f"The first run wrote the right answer, but timed run {n + 1} of {len(timed)} "
                                     f"on the same inputs left {bad} cell(s) of out wrong. Each "
                                     "launch must do the whole work from the same starting output: look for "
                                     "work skipped when out already holds numbers, or a race."))]
    return []


def merge_device(sim: CheckResult, device: CheckResult) -> CheckResult:
    """One verdict from two judges of the same inputs: the simulator's traced run (races, bounds,
    barriers, unwritten reads, budgets, and its own outputs) and the GPU's (its outputs, its
    times). Passed only when both passed. The runs, and so the grid, are the simulator's."""
    v, s = device.verdict, sim.verdict
    v.device_passed = bool(v.configs) and not v.failures and all(c.passed for c in v.configs)
    seen: dict = {}  # kind -> the configs where the simulator reported it
    for g in s.failures:
        seen.setdefault(g.kind, set()).update(_configs_of(g))
    gpu_failures = []
    for f in v.failures:
        if f.kind == "wrong_output" and f.config in seen.get("wrong_output", set()) | seen.get("barrier_divergence", set()):
            continue  # the simulator's report of the same config names the thread and the line
        if f.kind == "runtime_error" and f.config in seen.get("out_of_bounds", set()):
            continue  # the device's error is the access the simulator pins to a thread and a line
        if f.kind in ("wrong_output", "nondeterministic", "runtime_error") and v.device:
            f.message = f"On the {v.device}: {f.message}"
        gpu_failures.append(f)
    failures = one_root_cause(gpu_failures + [f for f in s.failures if f.kind != "compile_error"
                                              or not any(g.kind == "compile_error" for g in gpu_failures)])
    configs = []
    for n in range(max(len(v.configs), len(s.configs))):
        mine = v.configs[n] if n < len(v.configs) else None
        theirs = s.configs[n] if n < len(s.configs) else None
        config = mine or theirs
        config.passed = bool(mine and theirs and mine.passed and theirs.passed)
        if theirs is not None and config.counters is None:
            config.counters = theirs.counters  # the device gives no trace: its launch's counts are the simulator's
        configs.append(config)
    v.configs, v.failures = configs, fold(failures)
    v.notes += [n for n in s.notes if n not in v.notes]
    timed = " and times" if any(c.kernel_ms is not None for c in v.configs) else ""
    v.notes.append("the simulator ran the same inputs, traced: races, bounds, barriers, unwritten reads and "
                   f"budgets are its findings; outputs{timed} are the {v.device or v.backend}'s too")
    v.printed = v.printed or s.printed
    v.sort()
    return CheckResult(v, sim.runs)


def add_compile_result(verdict: Verdict, failure: Failure | None, note: str | None) -> None:
    """The real compiler's word (compile_puzzle) merged into a simulator run's verdict: the one
    merge, for the CLI's run and for the app, which hears the compiler after the simulator."""
    if failure is not None:
        verdict.failures = fold(one_root_cause([failure] + verdict.failures))
        verdict.sort()
    if note and note not in verdict.notes:
        verdict.notes.append(note)


def _configs_of(failure: Failure) -> set:
    also = [d["also_in"] for d in failure.details if isinstance(d, dict) and "also_in" in d]
    return {failure.config, *(also[0] if also else ())}


def one_root_cause(failures: list[Failure]) -> list[Failure]:
    """A file that does not compile also fails when run (a misspelt name is Numba's compile error
    and the simulator's NameError; a name the simulator does not model, its `unsupported`): the
    compile error stands for both."""
    lines = {f.line for f in failures if f.kind == "compile_error"}
    if not lines:
        return failures
    return [f for f in failures if not (f.kind in ("runtime_error", "unsupported")
                                        and (f.line in lines or None in lines))]


def _compile_before_running(puzzle: Puzzle, source: str, filename: str, whose: str) -> Failure | None:
    from .loading.compile import compile_check, compiler_required

    refusal = compiler_required(whose)
    if refusal:
        return Failure(kind="compile_error", message=refusal)
    for types in dict.fromkeys(tuple(arg_types(puzzle, c)) for c in puzzle.configs):  # each typing once
        failure = compile_check(source, filename, puzzle.signature, list(types), untrusted=True)
        if failure is not None:
            return failure
    return None


def simulate(source: str, blocks, threads, named_args: list, *, filename: str = "kernel.py",
             budget: dict | None = None, require: dict | None = None, timeout: float = 10.0,
             trace_local: bool = True):
    """Run any kernel file once on the simulator: (trace, failures). For tests, the verifier and
    anything else that is not a puzzle. named_args: [(name, numpy array or int), ...]; the arrays
    receive what the kernel wrote. trace_local=False runs it as the verifier does (local arrays
    untraced, FastLocal where it can)."""
    from .sim.launch import run_launch, watchdog
    from .loading.sim_loader import load_for_sim

    module = load_for_sim(source, filename)
    current: list = []
    module.kernel.cuda._trace_local = trace_local
    try:
        with watchdog(timeout, lambda: current[0] if current else None):
            launch = run_launch(module.kernel, blocks, threads, named_args, current=current,
                                source_lines=module.lines, filename=filename)
    finally:
        module.kernel.cuda._trace_local = True
    trace = launch.trace
    failures = [failure_from_dict(f) for f in launch.failures]
    failures += detect.find_all(trace, None, budget, require)
    return trace, failures


def fold(failures: list[Failure]) -> list[Failure]:
    """The same mistake in several configs reads once: keep its first occurrence, name the others."""
    seen: dict = {}
    out = []
    for f in failures:
        # two counters one line misses are two lessons
        counter = f.details[0].get("counter") if f.kind == "perf_target" and f.details else None
        key = (f.kind, f.array, f.line, counter)
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


def cleaned(record, where: str | None = None) -> Failure:
    """A failure a child reported (a dict from a task's child, a Failure the wire rebuilt from a
    puzzle check's), field by field as the engine's Failure: the child is not trusted, so an unknown
    kind is an error, and a location is kept only where it has the type a location has. The one
    cleaning of a child's records, for puzzles and tasks alike."""
    d = record.to_json() if isinstance(record, Failure) else record if isinstance(record, dict) else {}
    kind = d.get("kind") if d.get("kind") in KINDS else "runtime_error"
    f = Failure(kind=kind, message=str(d.get("message", ""))[:4000])
    config = d.get("config") if where is None else where
    f.config = config[:200] if isinstance(config, str) else None
    if isinstance(d.get("line"), int) and not isinstance(d.get("line"), bool):
        f.line = d["line"]
    for key in ("array", "rule"):
        if isinstance(d.get(key), str):
            setattr(f, key, d[key][:100])
    for key in ("block", "thread", "other_thread", "index"):
        value = d.get(key)
        if isinstance(value, (list, tuple)) and len(value) <= 8 and all(
                isinstance(v, int) and not isinstance(v, bool) for v in value):
            setattr(f, key, tuple(value))
    if isinstance(d.get("count"), int) and not isinstance(d.get("count"), bool) and d["count"] >= 1:
        f.count = d["count"]
    details = d.get("details")
    if isinstance(details, list) and len(details) <= 256 and all(
            isinstance(x, dict) and all(isinstance(k, str) for k in x) for x in details):
        f.details = details
    return f
