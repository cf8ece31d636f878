"""The learner's file on real Numba: a CUDA GPU, or Numba's own simulator for cross-checking ours.

Same configs, same inputs and the same Verdict as our simulator, so results compare directly. A
GPU gives no trace: it can say the output is wrong, not which thread raced; its extra is the
kernel's time, the median of several launches, timed as gpu_timing times every launch. This
module runs in a child process of its own (a bad kernel can take the CUDA context down with it),
chosen before numba is imported: NUMBA_ENABLE_CUDASIM must be set in the environment first for the
numba-sim backend.
"""

from __future__ import annotations

import math
import os
import secrets
import time

import numpy as np

from tutor.puzzles import Puzzle
from tutor.session import DEFAULT_GPU_MEMORY_MB, GPU_MEMORY_ENV
from .judge import _config_result, fresh_output, judge, plan
from .verdict import CheckResult, ConfigRun
from .loading.loader import LoadError, load_for_numba
from .verdict import Failure, Verdict

TIMING_RUNS = 20
PUZZLE_HOLD_US = 500  # a puzzle's one launch enqueues in tens of microseconds


class BackendUnavailable(Exception):
    """The backend cannot run here at all (no GPU, no driver): a usage problem, not the learner's."""


def numba_backend() -> str:
    return "numba-sim" if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" else "gpu"


def import_cuda():
    # numba-cuda 0.30.4 still calls np.row_stack, which numpy 2.5 removed; the GPU machine's image
    # ships numpy 2.5. Our own install pins numpy < 2.5; this keeps a foreign numpy working too.
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    from numba import cuda

    return cuda


def device_description() -> str:
    cuda = import_cuda()
    if numba_backend() == "numba-sim":
        return "Numba's CUDA simulator"
    if not cuda.is_available():
        raise BackendUnavailable("no CUDA GPU is available here (numba.cuda.is_available() is False); "
                                 "use --backend sim")
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
    return f"{name} (compute capability {dev.compute_capability[0]}.{dev.compute_capability[1]})"


def check_numba(puzzle: Puzzle, source: str, filename: str = "kernel.py", *, seed: int | None = None,
                n_random: int = 3, timing_runs: int = TIMING_RUNS) -> CheckResult:
    """Plan, run and judge here (the runner does the same with the run in its child)."""
    seed = secrets.randbits(31) if seed is None else seed
    planned = plan(puzzle, seed, n_random)
    result = run_numba(puzzle, source, filename, [(p.config, p.inputs) for p in planned], seed=seed,
                       timing_runs=timing_runs)
    return judge(puzzle, result, planned, keep_traces=False)


def largest(configs: list) -> int:
    """The config worth timing: the most threads, then the largest output. Small configs time the
    launch, not the kernel, and a room's GPU has better things to do than time them."""
    def size(n):
        config = configs[n][0]
        return (math.prod(config.blocks) * math.prod(config.threads), math.prod(config.shapes.get("out", (0,))), n)

    return max(range(len(configs)), key=size) if configs else 0


RESIDENT_THREADS = 132 * 2048  # an H200's SMs times their threads: local memory is reserved for these


def prepare_numba(puzzle: Puzzle, source: str, filename: str, configs: list,
                  memory_mb: int | None = None, *, untrusted: bool = False) -> tuple[CheckResult, dict | None]:
    """Load the file and compile its kernel for every config's argument types, before the GPU is
    taken: Numba's compile of new code takes about a second of CPU, which a room's queue should
    not wait on. Then what the launches would claim of GPU memory (their arrays, and the local
    memory the driver reserves per resident thread: a learner's `cuda.local.array` is theirs to
    size) against the learner's cap, so one learner cannot starve the room's GPU. `untrusted`: the
    file is built from its syntax tree, never run (loader.execute).
    (the result, with any failure; the namespace to run, or None.)"""
    backend = numba_backend()
    if backend == "gpu":
        device_description()  # no GPU here: said now, not after waiting for the room's turn
    verdict = Verdict(puzzle=puzzle.id, backend=backend)
    result = CheckResult(verdict)
    try:
        namespace = load_for_numba(source, filename, puzzle.signature, untrusted=untrusted)
    except LoadError as e:
        verdict.failures += e.failures()
        return result, None
    if backend != "gpu":
        return result, namespace  # Numba's simulator compiles nothing
    import numba

    kernel = namespace["kernel"]
    compiled: dict = {}  # argument types -> the compiled kernel (the dispatcher keeps it for the launch)
    for config, inputs in configs:
        args = [fresh_output(config)] + list(inputs.values())
        signature = tuple(numba.typeof(a) for a in args)
        if signature not in compiled:
            try:
                compiled[signature] = kernel.compile(signature)
            except Exception as e:
                failure = _launch_failure(e, filename, source, config.name)
                if failure.kind == "compile_error":
                    verdict.failures.append(failure)
                    return result, None
                break  # not the compiler's word: the launch in the turn will say what it is
        over = _over_cap(compiled[signature], config, args, memory_mb or DEFAULT_GPU_MEMORY_MB)
        if over:
            verdict.failures.append(Failure(kind="runtime_error", config=config.name, message=over))
            return result, None
    return result, namespace


def _over_cap(compiled, config, args, cap_mb: int) -> str | None:
    arrays = sum(int(a.nbytes) for a in args if isinstance(a, np.ndarray))
    try:
        local = int(compiled.local_mem_per_thread)
    except Exception:  # noqa: BLE001 (a numba-cuda without it: arrays alone are judged)
        local = 0
    threads = min(math.prod(config.blocks) * math.prod(config.threads), RESIDENT_THREADS)
    claimed = 2 * arrays + local * threads  # each array on the device, and its timing copy
    if claimed <= cap_mb * 2**20:
        return None
    what = (f"its kernel's local arrays take {local:,} bytes per thread, {local * threads / 2**20:,.0f} MB for "
            f"{threads:,} threads" if local * threads > arrays else f"its arrays take {2 * arrays / 2**20:,.0f} MB")
    return (f"This launch would claim {claimed / 2**20:,.0f} MB of GPU memory ({what}); each learner may use "
            f"{cap_mb:,} MB of the shared GPU ({GPU_MEMORY_ENV}). Make the local arrays smaller: a thread "
            "needs only what it keeps at once.")


def run_numba(puzzle: Puzzle, source: str, filename: str, configs: list, *, seed: int | None = None,
              timing_runs: int = TIMING_RUNS, namespace: dict | None = None,
              timed: list[int] | None = None, untrusted: bool = False) -> CheckResult:
    """Every (config, inputs) on the GPU (or Numba's simulator): what the kernel wrote and, on a GPU,
    its time; `judge.judge` compares the outputs with the answers this process never sees.
    `namespace`: the file as prepare_numba loaded and compiled it. `timed`: which configs to time
    (None: every one)."""
    backend = numba_backend()
    cuda = import_cuda()
    description = device_description()
    verdict = Verdict(puzzle=puzzle.id, backend=backend, seed=seed)
    verdict.device = description.split(" (compute capability")[0]
    verdict.notes.append(f"ran on {description}")
    result = CheckResult(verdict)
    if namespace is None:
        try:
            namespace = load_for_numba(source, filename, puzzle.signature, untrusted=untrusted)
        except LoadError as e:
            verdict.failures += e.failures()
            return result
    kernel = namespace["kernel"]
    late = 0  # timed runs whose enqueue outlasted the hold: their time includes the host's work
    for n, (config, inputs) in enumerate(configs):
        args = [fresh_output(config)] + [v.copy() if isinstance(v, np.ndarray) else v for v in inputs.values()]
        started = time.perf_counter()
        failures: list[Failure] = []
        kernel_ms, timed_out = None, None
        try:
            dargs = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
            launch = kernel[tuple(config.blocks), tuple(config.threads)]
            launch(*dargs)
            cuda.synchronize()
            got = dargs[0].copy_to_host()
            if backend == "gpu" and timing_runs and (timed is None or n in timed):
                kernel_ms, timed_out, timing = _time(cuda, launch, dargs, args[0], timing_runs)
                late += timing["enqueue_outlasted_hold"]
        except Exception as e:
            got = None
            failures.append(_launch_failure(e, filename, source, config.name))
        result.runs.append(ConfigRun(config, inputs, None, got, None, failures, time.perf_counter() - started,
                                     timed=timed_out))
        verdict.failures += failures
        verdict.configs.append(_config_result(config, not failures, kernel_ms))
        if any(f.kind == "compile_error" for f in failures):
            break
    if late:
        verdict.notes.append(f"in {late} timed run(s) the host took longer to start the kernel than the GPU "
                             "was held for, so those times include the host's work")
    return result


def _time(cuda, launch, dargs, fresh, runs) -> tuple[float, np.ndarray, dict]:
    """Median kernel time in ms (gpu_timing's method: cold L2, the host's enqueue hidden behind a
    hold), and what every timed run wrote. Before each launch the output is put back (untimed) as
    the judged run found it, so a kernel that accumulates with atomics, or that skips its work when
    `out` already holds numbers, times the whole work every run; and every timed run's output goes
    back to the judge, so a run that did less is caught."""
    from .process.gpu_timing import Timer

    fresh = np.array(fresh, copy=True)
    outputs: list = []
    timing = Timer(cuda, PUZZLE_HOLD_US).time(
        lambda: launch(*dargs), runs, warmup=1, reset=lambda: dargs[0].copy_to_device(fresh),
        after=lambda n: outputs.append(dargs[0].copy_to_host()))
    return float(timing["ms"]), np.stack(outputs), timing


def _launch_failure(e: Exception, filename: str, source: str, config: str) -> Failure:
    from .loading.compile import trim_numba_error

    text = str(e)
    missing = _missing_in_numba_simulator(e)
    if missing:
        return Failure(kind="unsupported", config=config, message=(
            f"Numba's simulator has no cuda.{missing}, so it cannot run this kernel; the kernel is not at fault. "
            "Run it on our simulator (--backend sim) or on a GPU (--backend gpu)."))
    kind = "compile_error" if _is_compile_error(e) else "runtime_error"
    line, message = trim_numba_error(text, filename, source, e)
    if kind == "compile_error":
        message = "Numba cannot compile this kernel" + (f" (line {line})" if line else "") + f": {message}"
    else:
        message = f"{type(e).__name__}: {message}" + (f" (line {line})" if line else "")
    return Failure(kind=kind, message=message, config=config, line=line)


def _missing_in_numba_simulator(e: Exception) -> str | None:
    """The cuda function Numba's simulator lacks (its shuffles, say), when that is what `e` says."""
    if numba_backend() != "numba-sim" or not isinstance(e, AttributeError):
        return None
    import re

    m = re.search(r"'(?:FakeCUDAModule|module)' object has no attribute '(\w+)'", str(e))
    return m.group(1) if m and "Fake" in str(e) else None


def _is_compile_error(e: Exception) -> bool:
    try:
        from numba.core.errors import NumbaError
    except ImportError:  # pragma: no cover
        return False
    names = {c.__name__ for c in type(e).__mro__}
    return isinstance(e, NumbaError) and not names & {"CudaAPIError", "CudaDriverError"}
