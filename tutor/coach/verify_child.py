"""One candidate, one fresh process: `python -m tutor.coach.verify_child TASK BACKEND < candidate.py`.

The candidate never shares a process with the verifier's judgement, nor with another candidate:
whatever it patches or caches dies with this process. Inputs come from a seed drawn here from the
OS, which the candidate cannot see; outputs are poisoned with NaN before every run; inputs are
compared before and after; every run is repeated to catch results that vary. Prints one JSON line.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

MIN_CASES = 5


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    task_name, backend = argv[0], argv[1]
    source = sys.stdin.read()
    real_stdout = os.fdopen(os.dup(1), "w")
    sys.stdout = open(os.devnull, "w")  # a candidate's prints cannot forge our answer
    result = verify_here(task_name, backend, source)
    real_stdout.write(json.dumps(result) + "\n")
    real_stdout.flush()
    return 0


def verify_here(task_name: str, backend: str, source: str) -> dict:
    from .tasks import load_task

    task = load_task(task_name)
    result = {"task": task_name, "backend": backend, "correct": False, "failures": [], "flags": []}
    rng = np.random.default_rng(int.from_bytes(os.urandom(8), "little"))
    reference, inputs_mod = task.module("reference"), task.module("inputs")
    rtol, atol = task.tolerance
    try:
        run = _runner(backend, source)
    except Exception as e:  # the candidate does not load or compile
        result["failures"].append({"kind": "compile_error", "message": f"{type(e).__name__}: {e}"})
        return result
    shapes = task.shapes(backend)
    cases = [shapes[i % len(shapes)] for i in range(max(MIN_CASES, len(shapes)))]
    bytes_moved = []
    for shape in cases:
        inputs = tuple(np.ascontiguousarray(x) for x in inputs_mod.make_inputs(rng, shape))
        originals = tuple(x.copy() for x in inputs)
        expected = np.asarray(reference.reference(*[x.astype(np.float64) for x in inputs]))
        out_shape = tuple(inputs_mod.output_shape(shape))
        where = f"shape {shape}"
        try:
            got, moved, issues = run(inputs, out_shape)
            again, _, _ = run(inputs, out_shape)
        except Exception as e:
            result["failures"].append({"kind": "runtime_error", "message": f"{type(e).__name__}: {e} ({where})",
                                       "shape": list(shape)})
            break
        for issue in issues:
            result["failures"].append({**issue, "shape": list(shape)})
        if any(not np.array_equal(a, b, equal_nan=True) for a, b in zip(inputs, originals)):
            result["failures"].append({"kind": "input_mutated", "shape": list(shape),
                                       "message": f"the candidate wrote into its inputs ({where})"})
        if got.shape != expected.shape:
            result["failures"].append({"kind": "wrong_shape", "shape": list(shape),
                                       "message": f"out has shape {got.shape}, expected {expected.shape}"})
            continue
        if not np.isfinite(got).all():
            bad = int((~np.isfinite(got)).sum())
            result["failures"].append({"kind": "not_finite", "shape": list(shape),
                                       "message": f"{bad} output cell(s) are NaN or infinite: not written, or "
                                                  f"overflowed ({where})"})
            continue
        err = np.abs(got.astype(np.float64) - expected)
        ok = err <= atol + rtol * np.abs(expected)
        if not ok.all():
            worst = np.unravel_index(int(np.argmax(err - rtol * np.abs(expected))), err.shape)
            result["failures"].append({
                "kind": "wrong_output", "shape": list(shape), "max_error": float(err.max()),
                "message": (f"{int((~ok).sum())} cell(s) off by more than rtol {rtol:g} / atol {atol:g}; worst "
                            f"at {tuple(int(i) for i in worst)}: got {float(got[worst]):.6g}, expected "
                            f"{float(expected[worst]):.6g} ({where})")})
        elif not np.allclose(again, got, rtol=rtol, atol=atol, equal_nan=False):
            result["failures"].append({"kind": "nondeterministic", "shape": list(shape),
                                       "message": f"a second run on the same inputs gave different results ({where}): "
                                                  "look for a missing barrier or a race"})
        if moved is not None:
            bytes_moved.append({"shape": list(shape), "bytes": moved})
    if bytes_moved:
        result["global_bytes"] = bytes_moved
    result["correct"] = not result["failures"]
    if result["correct"] and backend == "gpu":
        _time_against_baseline(task, source, result, rng, rtol, atol)
    return result


TIMING_RUNS = 25
SPEEDUP_TO_REVIEW = 10.0


def _time_against_baseline(task, source, result, rng, rtol, atol) -> None:
    """CUDA-event timing on the largest shape (gpu_timing: warm-up excluded, L2 flushed before every
    run, device time with the host's enqueue measured beside it), median of TIMING_RUNS, the task's naive baseline timed the same way in this process, and the
    candidate's answer checked again on a fresh input drawn here."""
    from ..engine.gpu import import_cuda
    from ..engine.loader import load_module_for_numba
    from .gpu_timing import Timer

    cuda = import_cuda()
    shape = task.largest_shape("gpu")
    inputs_mod, reference = task.module("inputs"), task.module("reference")
    inputs = tuple(np.ascontiguousarray(x) for x in inputs_mod.make_inputs(rng, shape))
    out_shape = tuple(inputs_mod.output_shape(shape))
    timer = Timer(cuda)

    def timed(src):
        launch = load_module_for_numba(src, "candidate.py")["launch"]
        d_inputs = [cuda.to_device(x) for x in inputs]
        d_out = cuda.device_array(out_shape, dtype=np.float32)
        return timer.time(lambda: launch(d_out, *d_inputs), TIMING_RUNS), launch

    mine, launch = timed(source)
    base, _ = timed(task.source("naive"))
    ms, base_ms = mine["ms"], base["ms"]
    fresh = tuple(np.ascontiguousarray(x) for x in inputs_mod.make_inputs(rng, shape))
    d_out = cuda.to_device(np.full(out_shape, np.nan, dtype=np.float32))
    launch(d_out, *[cuda.to_device(x) for x in fresh])
    got = d_out.copy_to_host()
    expected = reference.reference(*[x.astype(np.float64) for x in fresh])
    if not (np.isfinite(got).all() and np.allclose(got, expected, rtol=rtol, atol=atol)):
        result["failures"].append({"kind": "wrong_output", "shape": list(shape),
                                   "message": "wrong on a fresh input inside the timing run"})
        result["correct"] = False
        return
    speedup = base_ms / ms if ms > 0 else float("inf")
    result["timing"] = {"shape": list(shape), "ms": ms, "baseline_ms": base_ms, "speedup": speedup,
                        "runs": TIMING_RUNS, "host_enqueue_ms": mine["host_enqueue_ms"],
                        "baseline_host_enqueue_ms": base["host_enqueue_ms"]}
    if mine["enqueue_outlasted_hold"] or base["enqueue_outlasted_hold"]:
        result["flags"].append("the host took longer to enqueue a launch than the GPU was held; those runs "
                               "include idle time")
    if speedup > SPEEDUP_TO_REVIEW:
        result["flags"].append(f"speedup {speedup:.1f}x over the naive baseline: more than "
                               f"{SPEEDUP_TO_REVIEW:g}x is flagged for review, not trusted")


def _runner(backend: str, source: str):
    """A function (inputs, out_shape) -> (output, global bytes moved or None, issues)."""
    if backend == "sim":
        from ..engine.loader import load_module_for_sim

        module = load_module_for_sim(source, "candidate.py")
        launch = module.namespace["launch"]
        cuda = module.cuda

        compiled: set = set()

        def run(inputs, out_shape):
            out = np.full(out_shape, np.nan, dtype=np.float32)
            cuda.traces.clear()
            cuda.launches.clear()
            launch(out, *inputs)
            moved, issues = 0, []
            fresh = [launch for launch in cuda.launches if launch not in compiled]
            if fresh:  # the real compiler sees each kernel once per argument types: what a GPU would reject
                from ..engine.compile import compile_launches

                compiled.update(fresh)
                issues += [{"kind": f["kind"], "message": f["message"]}
                           for f in compile_launches(source, "candidate.py", fresh)]
            from ..engine import detect
            from ..engine.trace import GLOBAL, OOB_READ, OOB_WRITE

            for trace, failures in cuda.traces:
                issues += [{"kind": f["kind"], "message": f["message"]} for f in failures]
                spaces = [a.space for a in trace.arrays]
                sizes = [np.dtype(a.dtype).itemsize for a in trace.arrays]
                moved += sum(sizes[e[2]] for e in trace.events
                             if spaces[e[2]] == GLOBAL and e[1] not in (OOB_READ, OOB_WRITE))
                issues += [{"kind": f.kind, "message": f.message} for f in detect.find_all(trace, None)]
            return out, moved, _unique(issues)

        return run
    from ..engine.gpu import import_cuda
    from ..engine.loader import load_module_for_numba

    cuda = import_cuda()
    launch = load_module_for_numba(source, "candidate.py")["launch"]

    def run(inputs, out_shape):
        d_inputs = [cuda.to_device(x) for x in inputs]
        d_out = cuda.to_device(np.full(out_shape, np.nan, dtype=np.float32))
        launch(d_out, *d_inputs)
        cuda.synchronize()
        for x, d in zip(inputs, d_inputs):  # what the candidate left in its inputs
            x[...] = d.copy_to_host()
        return d_out.copy_to_host(), None, []

    return run


def _unique(issues):
    seen, out = set(), []
    for i in issues:
        key = (i["kind"], i["message"])
        if key not in seen:
            seen.add(key)
            out.append(i)
    return out


if __name__ == "__main__":
    sys.exit(main())
