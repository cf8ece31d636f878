"""`gpu-tutor verify TASK FILE`: every candidate kernel proves itself before anyone sees it.

First a static screen of the source (nothing runs). Then one sandboxed child per candidate (see
engine/process/sandbox.py and verify_child.py) runs it; this process is the judge. It draws the inputs
from a seed the child never sees, computes the reference, and compares: outputs poisoned with NaN
before every run, inputs checked for writes, a repeat run checked for the same answer, and the
child's records checked for plausibility (it launched something, moved at least the bytes its
output holds, and at the scored shape claims no less modelled time than those bytes allow). The
answer is the engine's Verdict, printed by the same text view as `check`.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import threading
import time
import zlib

import numpy as np

from ..engine.process import wire
from ..engine.analysis.modelled_time import floor_seconds, least_seconds
from ..engine.process.sandbox import Child, ChildDied, ChildFailed, ChildTimeout
from ..engine.analysis.detect import bad_cells
from ..engine.judge import cleaned
from ..session import Session
from ..engine.verdict import ConfigResult, Failure, GpuTiming, ShapeMeasure, Verdict

# The one time limit of a verification, for `gpu-tutor verify` and for the optimiser alike, so that
# a candidate the optimiser kept verifies the same way when the learner runs verify on it. A correct
# candidate's verification is bounded (the large shapes run the blocks that fit DRAWN_S and SCORED_S)
# and takes well under a minute on an idle machine, but on two loaded cores whole verifications of
# the larger tasks ran past 120 s; a candidate that hangs costs the whole limit, which is small beside
# a reasoning model's round of several minutes.
DEFAULT_TIMEOUT = 300.0
MEMORY_MB = 8192
MIN_CASES = 5
DRAWN_S = 12.0  # of all drawn shapes' runs together, the simulated blocks' time (task_child's Sample)
SCORED_S = 6.0  # of the scored shape's first run: a kernel whose every block does not fit is judged on a sample, unscored
SECOND_SHARE = 0.4  # of a shape's time, what its second start of out gets (on blocks of the first's)
TIMING_RUNS = 25
SPEEDUP_TO_REVIEW = 10.0
ANSWER_HEADER_MB = 64  # the child's records of what ran: launches, counters, the modelled time


def verify(task: str, source: str, backend: str = "sim", *, timeout: float = DEFAULT_TIMEOUT,
           on_wait=None, session: Session | None = None) -> Verdict:
    """`on_wait(n)` hears "n ahead" while a GPU verification waits for its turn, in the GPU queue
    the session names."""
    from ..engine.loading.static_rules import check_task_module
    from .tasks import load_task

    spec = load_task(task)  # an unknown task is a usage error (KeyError), before anything runs
    verdict = Verdict(puzzle=task, backend=backend)
    findings = check_task_module(source, "candidate.py")
    if findings:
        verdict.failures = [Failure(kind="static", rule=f.rule, line=f.line, message=f"{f.message} {f.fix}".strip())
                            for f in findings]
        return verdict
    queue = None
    if backend == "gpu":  # candidates on a shared GPU server take their turn like learners' runs do
        from ..engine.process.gpulock import shared_queue

        session = session or Session()
        queue = shared_queue(session.gpu_turns, session.gpu_queue, session.turns_notice)
    deadline = time.monotonic() + timeout
    beside = None
    if backend != "sim":  # a GPU (or Numba's simulator) judges outputs only: our simulator's detections run beside it
        simulated = Verdict(puzzle=task, backend="sim")
        beside = threading.Thread(target=_Judge(spec, source, "sim", deadline, timeout, plan_gpu=False).run,
                                  args=(simulated,),
                                  name="gpu-tutor-verify-sim", daemon=True)
        beside.start()
    turn = queue.turn(on_wait=on_wait) if queue is not None else contextlib.nullcontext()
    try:
        with turn:
            _Judge(spec, source, backend, deadline, timeout).run(verdict)
    finally:
        if beside is not None:
            beside.join()
    if beside is not None:
        _add_simulator(verdict, simulated)
    verdict.sort()
    return verdict


def _add_simulator(verdict: Verdict, simulated: Verdict) -> None:
    """The simulator's verdict on its own shapes, inside the GPU's: races, bounds, barriers and
    unwritten reads are only seen there. Passed only when both passed."""
    for c in simulated.configs:
        c.name = f"simulator, {c.name}"
    for f in simulated.failures:
        f.config = f"simulator, {f.config}" if f.config else "simulator"
    verdict.failures += simulated.failures
    verdict.configs = simulated.configs + verdict.configs
    verdict.measures = simulated.measures
    verdict.notes += [n for n in simulated.notes if n not in verdict.notes]
    if not simulated.configs and not simulated.failures:
        verdict.failures.append(Failure(kind="runtime_error", config="simulator",
                                        message="the simulator's run gave no verdict"))


class _Judge:
    """The parent's half of one verification: it holds the inputs, the reference and the verdict."""

    def __init__(self, task, source, backend, deadline, timeout, plan_gpu: bool = True):
        """`plan_gpu`: on the simulator, also plan launch() at the GPU's shapes (gpu_shapes), where
        a GPU would refuse what the simulator's small shapes never asked for; off beside a GPU's
        own verification, which runs those shapes."""
        self.task, self.source, self.backend = task, source, backend
        self.plan_gpu = plan_gpu and backend == "sim"
        self.deadline, self.timeout = deadline, timeout
        self.rng = np.random.default_rng(int.from_bytes(os.urandom(8), "little"))
        self.rtol, self.atol = task.tolerance
        self.reference, self.inputs_mod = task.module("reference"), task.module("inputs")

    def run(self, verdict: Verdict) -> None:
        child = Child("tutor.engine.child", [self.backend], memory_mb=MEMORY_MB, gpu=self.backend == "gpu",
                      cpu_seconds=int(self.timeout) + 60,
                      env={"NUMBA_ENABLE_CUDASIM": "1" if self.backend == "numba-sim" else "0"})
        try:
            with child:
                self.child = child
                self.in_flight = ("loading", time.monotonic())
                loaded, _ = self.ask({"op": "task_load", "source": self.source})
                verdict.failures += [cleaned(f) for f in loaded["failures"]]
                self.executable, self.covered = _lines(loaded.get("lines")), set()
                if not verdict.failures:
                    self.cases(verdict)
                if not verdict.failures and verdict.configs and self.plan_gpu:
                    self.gpu_shapes(verdict)
                if not verdict.failures and verdict.configs and self.backend == "sim":
                    self.coverage(verdict)
                if not verdict.failures and verdict.configs and self.backend == "gpu":
                    self.time(verdict)
                verdict.notes += child.notes
        except ChildTimeout:
            where, since = self.in_flight
            verdict.failures.append(Failure(kind="timeout", config=where, message=(
                f"the verification's {self.timeout:g} s ran out while the candidate ran at {where} (that shape had "
                f"taken {time.monotonic() - since:.1f} s) and its process was stopped; "
                f"{len(verdict.configs)} shape(s) had been judged before it")))
        except ChildDied as e:
            where, since = self.in_flight
            verdict.failures.append(Failure(kind="runtime_error", config=where, message=(
                f"the candidate's process ended without an answer at {where}, {time.monotonic() - since:.1f} s into "
                f"it: {_how_it_ended(e)}")))
        except ChildFailed as e:
            verdict.failures.append(Failure(kind="runtime_error", message=f"{e.name}: {e.message}"))

    def ask(self, request, arrays=None, outputs: list[int] = ()):
        """`outputs`: the sizes in bytes of the arrays the answer may hold (a candidate's answer larger
        than what it was asked for is refused unread)."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ChildTimeout()
        limits = wire.Limits.of(ANSWER_HEADER_MB, outputs)
        try:
            return self.child.ask(request, arrays, timeout=left, start_grace=max(left, 60.0), limits=limits)
        finally:
            self.child.end_request()

    def cases(self, verdict: Verdict) -> None:
        for n, (shape, role) in enumerate(self.shapes()):
            failures = self.case(shape, verdict, self.starts(n), role=role)
            verdict.failures += failures
            if any(f.kind in ("compile_error", "runtime_error") for f in failures):
                break

    def starts(self, n: int) -> list:
        """What `out` holds before each of a case's two runs (task_child.start_of): NaN first, then
        zeros or random numbers in turn. A task's `out` may hold anything, so both runs must write
        the answer; a kernel that reads `out` before writing it, or skips work when it holds
        numbers, fails one of them. The answer itself is never a start: it never leaves this process."""
        return ["nan", "zeros" if n % 2 == 0 else int(self.rng.integers(1, 2**31))]

    def shapes(self) -> list[tuple[tuple, str]]:
        """(shape, role) of each case, role "fixed", "scored" or "drawn": the task's fixed shapes,
        cycled to MIN_CASES cases with fresh inputs each time; then on our simulator the scored
        shape (`sim_scored`: fixed, so the baseline and every candidate are measured on the same
        work) and the shapes drawn here from the task's `sim_random` rules: past every tile and
        window a kernel might assume, from a seed the candidate never sees, new at every
        verification. Every case runs twice, from two starts of `out` (starts; on the simulator a kernel
        blind to `out`'s start is answered from its first run's writes: task_child._replayable)."""
        sim = self.backend == "sim"
        drawn = self.task.random_shapes(self.rng) if sim else []
        self.drawn = len(drawn)
        scored = [self.task.scored_shape()] if sim and self.task.scored_shape() else []
        fixed = self.task.shapes(self.backend)
        n = max(MIN_CASES - len(drawn) - len(scored), len(fixed)) if fixed else 0
        return ([(fixed[i % len(fixed)], "fixed") for i in range(n)] + [(shape, "scored") for shape in scored]
                + [(shape, "drawn") for shape in drawn])

    def case(self, shape, verdict: Verdict, starts: list, role: str = "fixed") -> list[Failure]:
        where = f"shape {tuple(shape)}"
        # The scored shape's inputs are the same at every verification (a fixed seed of the task's
        # name): where the work depends on the data (attention_document's documents) the baseline and
        # every candidate must be measured on the same inputs too, or the score is partly the draw.
        rng = np.random.default_rng(zlib.crc32(self.task.name.encode())) if role == "scored" else self.rng
        inputs = [np.ascontiguousarray(x) for x in self.inputs_mod.make_inputs(rng, shape)]
        expected = np.asarray(self.reference.reference(*[x.astype(np.float64) for x in inputs]))
        out_shape = tuple(self.inputs_mod.output_shape(shape))
        names = [spec["name"] for spec in self.task.data.get("inputs", [])]
        # The modelled time is the optimiser's score: taken where the score is (the scored shape, or
        # the fixed shapes of a task that has none), never on a drawn shape, which nothing scores.
        model = self.backend == "sim" and (role == "scored" or (role == "fixed" and not self.task.scored_shape()))
        repeat = len(starts)
        request = {"op": "task_run", "out_shape": list(out_shape), "starts": starts, "model": model}
        if role in ("drawn", "scored") and self.backend == "sim":  # large shapes: the blocks that fit (task_child)
            if role == "scored":
                first, second = SCORED_S, SCORED_S * SECOND_SHARE
            else:
                total = max(1.0, DRAWN_S / max(1, self.drawn))
                first, second = total * (1 - SECOND_SHARE), total * SECOND_SHARE
            request["sample"] = {"seed": int(self.rng.integers(0, 2**31)), "seconds": first, "second": second}
        self.in_flight = (where, time.monotonic())
        try:
            records, arrays = self.ask(request, inputs, outputs=[4 * math.prod(out_shape)] * repeat
                                       + [x.nbytes for x in inputs] + [math.prod(out_shape)] * repeat)
        except ChildFailed as e:
            return [Failure(kind="runtime_error", config=where, message=f"{e.name}: {e.message} ({where})")]
        failures = [cleaned(i, where) for i in records["issues"]]
        self.covered |= _lines(records.get("lines"))
        verdict.configs.append(ConfigResult(where, (), (), {"out": out_shape}, {}, False))
        if not records.get("ran", True):
            return failures
        masks = arrays[repeat + len(inputs):] if records.get("judged_cells") is True else []
        arrays = arrays[:repeat + len(inputs)] if masks else arrays
        if len(arrays) != repeat + len(inputs) or (masks and (len(masks) != repeat or any(
                m.shape != out_shape or m.dtype != np.uint8 for m in masks))):
            return failures + [Failure(kind="runtime_error", config=where, message="the candidate's process "
                                                                                  "answered without its outputs")]
        got, again, after = arrays[0], arrays[repeat - 1], arrays[repeat:]
        sampled = _sampled(records.get("sampled"))
        if masks:  # blocks left out at a large shape: their cells are not judged here (the fixed shapes run every block)
            if not masks[0].any():  # a launch stopped by its error says why itself
                return failures or [Failure(kind="wrong_output", config=where, message=(
                    f"the simulated blocks wrote no cell of out ({where})"))]
            got = np.where(masks[0].astype(bool), got, expected).astype(got.dtype)
            again = np.where(masks[-1].astype(bool), again, expected).astype(again.dtype)
        if sampled and role == "scored":
            verdict.notes.append(f"no modelled time, so no score: at the scored {where} only {sampled[0]} of "
                                 f"{sampled[1]} blocks could be simulated in {SCORED_S:g} s, far more work than "
                                 "the naive kernel's; the cells they wrote were judged")
            model = False
        elif sampled:
            verdict.notes.append(f"at {where}, {sampled[0]} of its {sampled[1]} blocks were simulated (the first, the "
                                 "last, and others drawn at random, as many as fit the time a drawn shape gets; the "
                                 "blocks are independent: one launch, no global atomics); the cells they wrote were "
                                 "judged")
        floor = sum(int(x.nbytes) for x in inputs) + int(np.prod(out_shape)) * 4
        judged = self.compare(inputs, after, got, again, expected, where, records.get("writes", {}), names,
                              starts[-1])
        # the floor only judges an answer that is right (a wrong one moves less for being wrong)
        failures += self.plausible(records, floor if not judged and not sampled else 0, where) + judged
        modelled = _modelled(records.get("modelled")) if model else None
        if model and not judged:
            failures += self.plausible_time(records.get("modelled"), modelled, floor, where)
        fault = records.get("modelled") if model else None
        if isinstance(fault, dict) and isinstance(fault.get("error"), str):
            verdict.notes.append(f"no modelled time at {where}, so no score: the model failed "
                                 f"({fault['error'][:200]})")
        if isinstance(records.get("moved"), int):
            record = ShapeMeasure(list(shape), int(records["moved"]), floor, scored=role == "scored",
                                  drawn=role == "drawn")
            if modelled is not None:
                record.modelled_s, record.floor_s = modelled["seconds"], floor_seconds(floor)
                record.modelled = modelled["kernels"]
            counted = _counted(records.get("counters")) if model else None
            if counted:
                record.counters = counted  # the child's word, for the profile's table: never scored
            verdict.measures.append(record)
        verdict.configs[-1].passed = not failures
        return failures

    def gpu_shapes(self, verdict: Verdict) -> None:
        """launch() planned at each of the task's GPU shapes, no kernel run (task_child.plan_at): a
        block of more threads than its registers allow, more dynamic shared memory than a block
        may have, or a grid past the GPU's limits, where only a GPU's sizes ask for them, fails
        here as it would fail there."""
        shapes = []
        for shape in self.task.shapes("gpu"):
            arrays = _arrays_at(self.task, tuple(shape))
            shapes.append({"where": f"the GPU's shape {tuple(shape)}",
                           "out": list(self.inputs_mod.output_shape(shape)), "inputs": arrays})
        self.in_flight = ("the GPU's shapes (planned)", time.monotonic())
        try:
            records, _ = self.ask({"op": "task_plan", "shapes": shapes})
        except ChildFailed as e:
            verdict.failures.append(Failure(kind="runtime_error", config="the GPU's shapes",
                                            message=f"{e.name}: {e.message} (launch() planned at the GPU's shapes)"))
            return
        verdict.failures += [cleaned(i) for i in records.get("issues", [])]
        skipped = [str(w)[:100] for w in records.get("skipped", [])[:8]] if isinstance(records.get("skipped"), list) else []
        if skipped:
            verdict.notes.append(f"launch() was not planned at {', '.join(skipped)}: its arrays did not fit this "
                                 "machine's memory for a verification; a GPU's refusals there are not checked here")

    def coverage(self, verdict: Verdict) -> None:
        """Every line of the candidate's kernels and launch must run in some verified shape: a path
        no shape reached (a branch on a size past every shape drawn, a table for more heads) was
        never checked. The verdict names such lines; the optimiser keeps no such candidate as its best."""
        never = sorted(self.executable - self.covered)
        if never:
            verdict.unchecked_lines = never
            verdict.notes.append(
                f"line(s) {', '.join(str(n) for n in never[:20])}{' ...' if len(never) > 20 else ''} of the candidate "
                "ran in no verified shape, so nothing checked them: correct where it ran, unproven there")

    def plausible(self, records, floor, where) -> list[Failure]:
        """The child's records are claims. A verification that launched nothing did not happen the way
        it says; one that moved fewer bytes of global memory than the floor (every input read once,
        the output written once) computed the answer somewhere no kernel can: on the host, or from
        something the records do not show."""
        if self.backend != "sim":
            return []
        if not records.get("launches"):
            return [Failure(kind="runtime_error", config=where, message=f"launch() launched no kernel ({where}): "
                                                                       "every output must be written by a kernel")]
        moved = records.get("moved")
        if not isinstance(moved, int) or moved < floor:
            return [Failure(kind="implausible", config=where, message=(
                f"the kernels moved {moved:,} bytes of global memory, fewer than the {floor:,} bytes any correct "
                f"kernel moves ({where}: every input read once, the output written once); the answer cannot "
                "have been computed by these kernels" if isinstance(moved, int) else
                f"the records of what ran are malformed ({where})"))]
        return []

    def plausible_time(self, claimed, modelled, floor, where) -> list[Failure]:
        """The modelled time is a claim too. One below a launch plus the floor's bytes at bandwidth
        is not the model's. The model's own fault, which the child reports as such, only costs the
        candidate its score."""
        if isinstance(claimed, dict) and "error" in claimed and "seconds" not in claimed:
            return []
        least = least_seconds(floor)
        if modelled is None or modelled["seconds"] < least:
            return [Failure(kind="implausible", config=where, message=(
                f"the records claim a modelled time of {modelled['seconds'] * 1e6:.3g} us, less than one launch "
                f"and the {floor:,} bytes any correct kernel moves at the device's bandwidth ({least * 1e6:.3g} us, "
                f"{where})" if modelled is not None else f"the records of the modelled time are malformed ({where})"))]
        return []

    def compare(self, inputs, after, got, again, expected, where, writes=None, names=(), start="zeros") -> list[Failure]:
        """Inputs left as they were, then the output. A wrong output after a write into an input
        follows from it (the reference saw the input unchanged): it is told inside that failure, not
        as a second one to chase."""
        mutated = [self.mutation(i, a, b, where, (writes or {}).get(str(i)), names)
                   for i, (a, b) in enumerate(zip(inputs, after))
                   if not (a.shape == b.shape and np.array_equal(a, b, equal_nan=True))]
        output = self.output(got, again, expected, where, start)
        if mutated and output:
            first = mutated[0]
            first.message += " Following from it: " + "; ".join(f.message for f in output)
            first.details = [d for f in output for d in f.details]
            return mutated
        return mutated + output

    def mutation(self, i, before, after, where, seen, names) -> Failure:
        name = names[i] if i < len(names) else f"input {i + 1}"
        cells = f"{int((before != after).sum())} cell(s) of " if before.shape == after.shape else ""
        line = seen.get("line") if isinstance(seen, dict) and isinstance(seen.get("line"), int) else None
        at = f", first at line {line} (kernel `{seen.get('kernel', '?')}`)" if line is not None else ""
        return Failure(kind="input_mutated", config=where, array=name, line=line, message=(
            f"the candidate wrote into {cells}its input `{name}`{at} ({where}): inputs are read-only; "
            "keep intermediate values in a scratch array from cuda.device_array."))

    def output(self, got, again, expected, where, start="zeros") -> list[Failure]:
        if got.shape != expected.shape:
            return [Failure(kind="wrong_shape", config=where,
                            message=f"out has shape {got.shape}, expected {expected.shape} ({where})")]
        if not np.isfinite(got).all():
            bad = int((~np.isfinite(got)).sum())
            return [Failure(kind="not_finite", config=where, message=(
                f"{bad} output cell(s) are NaN or infinite: not written, or overflowed ({where})"))]
        wrong = self.wrong(got, expected, where)
        if wrong is not None:
            return [wrong]
        if again is got:
            return []
        started = "zeros" if start == "zeros" else "random numbers"
        if again.shape == got.shape and self.wrong(again, expected, where) is not None:  # NaN and inf count as wrong
            if np.allclose(again, got, rtol=self.rtol, atol=self.atol, equal_nan=False):
                return []  # within tolerance of a right first run, only just past the answer's: rounding, not the start
            bad = int(bad_cells(expected, again, self.rtol, self.atol).sum())
            return [Failure(kind="wrong_output", config=where, count=bad, message=(
                f"the first run (out filled with NaN) was right, but a second run on the same inputs with out "
                f"starting as {started} left {bad} cell(s) wrong ({where}): out may hold anything when the kernel "
                "starts; write every cell of it, and never read it before writing it"))]
        if again.shape != got.shape or not np.allclose(again, got, rtol=self.rtol, atol=self.atol, equal_nan=False):
            return [Failure(kind="nondeterministic", config=where, message=(
                f"a second run on the same inputs gave different results ({where}): look for a missing barrier "
                "or a race"))]
        return []

    def wrong(self, got, expected, where) -> Failure | None:
        """The one rule for a wrong cell (detect.bad_cells, a puzzle's too), at the task's tolerance."""
        err = np.abs(got.astype(np.float64) - expected)
        ok = ~bad_cells(expected, got, self.rtol, self.atol)
        if ok.all():
            return None
        worst = np.unravel_index(int(np.argmax(err - self.rtol * np.abs(expected))), err.shape)
        return Failure(kind="wrong_output", config=where, details=[{"max_error": float(err.max())}], message=(
            f"{int((~ok).sum())} cell(s) off by more than rtol {self.rtol:g} / atol {self.atol:g}; worst at "
            f"{tuple(int(i) for i in worst)}: got {float(got[worst]):.6g}, expected {float(expected[worst]):.6g} "
            f"({where})"))

    def time(self, verdict: Verdict) -> None:
        """Timing on the largest shape, median of TIMING_RUNS, the naive baseline timed the same way
        in the same process, and the candidate's answer checked again on fresh inputs drawn here."""
        shape = self.task.largest_shape("gpu")
        self.in_flight = (f"shape {tuple(shape)}, timed", time.monotonic())
        inputs = [np.ascontiguousarray(x) for x in self.inputs_mod.make_inputs(self.rng, shape)]
        fresh = [np.ascontiguousarray(x) for x in self.inputs_mod.make_inputs(self.rng, shape)]
        out_shape = tuple(self.inputs_mod.output_shape(shape))
        # Two timed runs are judged too, one of them drawn here: the output is poisoned before every
        # timed run, so a kernel that skips work when `out` already holds numbers is caught, not timed.
        keep = sorted({int(self.rng.integers(0, TIMING_RUNS)), TIMING_RUNS - 1})
        answer, arrays = self.ask({"op": "task_time", "out_shape": list(out_shape), "n_inputs": len(inputs),
                                   "runs": TIMING_RUNS, "baseline": self.task.source("naive"),
                                   "keep_runs": keep}, inputs + fresh,
                                  outputs=[4 * math.prod(out_shape)] * (1 + len(keep)))
        where = f"shape {tuple(shape)}"
        expected = self.reference.reference(*[x.astype(np.float64) for x in fresh])
        got = arrays[0] if arrays else np.empty(0)
        if not self.close(got, expected):
            verdict.failures.append(Failure(kind="wrong_output", config=where,
                                            message=f"wrong on a fresh input inside the timing run ({where})"))
            return
        timed = self.reference.reference(*[x.astype(np.float64) for x in inputs])
        if len(arrays) != 1 + len(keep) or not all(self.close(a, timed) for a in arrays[1:]):
            verdict.failures.append(Failure(kind="nondeterministic", config=where, message=(
                f"the runs that were timed did not all write the answer ({where}; timed runs {[k + 1 for k in keep]} "
                f"of {TIMING_RUNS} were checked): every launch must do the whole work, whatever out holds")))
            return
        mine, base = answer["mine"], answer["base"]
        ms, base_ms = float(mine["ms"]), float(base["ms"])
        speedup = base_ms / ms if ms > 0 else float("inf")
        verdict.timing = GpuTiming(list(shape), ms, base_ms, speedup, TIMING_RUNS, float(mine["host_enqueue_ms"]),
                                   float(base["host_enqueue_ms"]))
        if mine["enqueue_outlasted_hold"] or base["enqueue_outlasted_hold"]:
            verdict.flags.append("the host took longer to enqueue a launch than the GPU was held; those runs "
                                 "include idle time")
        if speedup > SPEEDUP_TO_REVIEW:
            verdict.flags.append(f"speedup {speedup:.1f}x over the naive baseline: more than "
                                 f"{SPEEDUP_TO_REVIEW:g}x is flagged for review, not trusted")


    def close(self, got, expected) -> bool:
        bad = bad_cells(expected, got, self.rtol, self.atol)
        return bad is not None and not bad.any()


_KERNEL_TERMS = ("seconds", "launch_s", "blocks_s", "latency_s", "pipe_s", "dram_s", "atomic_s", "issue_s",
                 "compute_s", "margin")
_KERNEL_COUNTS = ("dram_bytes", "rounds", "barriers", "waves", "blocks_per_sm", "instructions")
_BOUNDS = ("launch", "latency", "memory pipe", "issue", "DRAM bandwidth", "atomics")
_INSTRUCTION_TERMS = ("issue_s", "compute_s", "margin", "instructions")


def _lines(claimed) -> set[int]:
    """Line numbers from the child's records, kept where they are line numbers."""
    if not isinstance(claimed, list) or len(claimed) > 100_000:
        return set()
    return {n for n in claimed if isinstance(n, int) and not isinstance(n, bool) and 0 < n < 1_000_000}


def _how_it_ended(e) -> str:
    """How a child died, in words: its signal or exit status, and the error it printed last (a
    Python error's line, never the list of extension modules a fatal error appends)."""
    how = f"it was stopped: {e.why}" if e.why else f"it {e.how(MEMORY_MB)}"
    lines = [ln.strip() for ln in (e.stderr or "").splitlines() if ln.strip()]
    said = [ln for ln in lines if not ln.startswith(("Extension modules:", "Current thread", "File ", "Thread 0x",
                                                      "<no Python frame>", "Total ("))]
    errors = [ln for ln in said if "Error" in ln or "error" in ln or ln.startswith("Fatal Python")]
    last = (errors or said or [""])[-1][:300]
    return how + (f" (its last words: {last})" if last else "")


def _sampled(claimed) -> tuple[int, int] | None:
    """(blocks simulated, blocks in the launch) where the child says it sampled, if the figures are figures."""
    if not isinstance(claimed, dict):
        return None
    ran, of = claimed.get("ran"), claimed.get("of")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (ran, of)) or not 0 < ran < of:
        return None
    return ran, of


def _modelled(claimed) -> dict | None:
    """The child's modelled time, kept only where every figure has the type and range a figure has
    (the child is not trusted): {"seconds", "kernels": [...]}; None otherwise."""
    def number(v, whole=False):
        ok = isinstance(v, int) if whole else isinstance(v, (int, float))
        return ok and not isinstance(v, bool) and math.isfinite(v) and v >= 0

    if not isinstance(claimed, dict) or not number(claimed.get("seconds")):
        return None
    kernels = claimed.get("kernels")
    if not isinstance(kernels, list) or not 0 < len(kernels) <= 256:
        return None
    kept = []
    for k in kernels:
        if not isinstance(k, dict):
            return None
        k = {f: 0 for f in _INSTRUCTION_TERMS} | k  # a record of memory alone counts no instruction
        if not all(number(k.get(f)) for f in _KERNEL_TERMS) or not all(number(k.get(f), whole=True)
                                                                       for f in _KERNEL_COUNTS):
            return None
        entry = {f: float(k[f]) for f in _KERNEL_TERMS} | {f: int(k[f]) for f in _KERNEL_COUNTS}
        entry["name"] = re.sub(r"[^A-Za-z0-9_]", "", str(k.get("name", "")))[:40] or "kernel"
        entry["bound"] = k.get("bound") if k.get("bound") in _BOUNDS else "latency"
        heaviest = k.get("heaviest")
        entry["heaviest"] = [[int(a), float(b)] for a, b in heaviest[:3]] if isinstance(heaviest, list) and all(
            isinstance(x, list) and len(x) == 2 and number(x[0], whole=True) and number(x[1]) and x[1] <= 1
            for x in heaviest[:3]) else []
        kept.append(entry)
    total = sum(k["seconds"] for k in kept)
    if not math.isclose(total, float(claimed["seconds"]), rel_tol=1e-6, abs_tol=1e-12):
        return None
    return {"seconds": total, "kernels": kept}


def _counted(claimed) -> list | None:
    """The child's per-kernel counters, kept only in the shape Counters.from_json reads."""
    from ..engine.analysis.counters import Counters

    if not isinstance(claimed, list) or len(claimed) > 64:
        return None
    try:
        return [Counters.from_json(c).to_json() for c in claimed]
    except (TypeError, ValueError, KeyError, AttributeError):
        return None


_ARRAYS_AT: dict = {}


def _arrays_at(task, shape: tuple) -> list:
    """[[shape, dtype], ...] of the task's inputs at `shape` (made once per process: a GPU shape's
    inputs take a second to draw, and only their sizes are sent)."""
    key = (str(task.folder), shape)
    if key not in _ARRAYS_AT:
        made = task.module("inputs").make_inputs(np.random.default_rng(0), shape)
        _ARRAYS_AT[key] = [[list(np.shape(x)), str(np.asarray(x).dtype)] for x in made]
    return _ARRAYS_AT[key]
