"""Tune a coaching task's kernel on a GPU: the same kernel file with its module constants changed,
each variant checked against the float64 reference and timed, in one process.

    python bench/expert_sweep.py TASK [--kernel expert|naive|PATH] [--runs 20] [--json out.json]
        [--set NAME=v1,v2,...]... [--file PATH]...

Every combination of the --set values is a variant (a constant is replaced where the file assigns
it at module level: `NAME = value`); each --file is a variant too (another kernel file for the same
task, a step of a walkthrough). The first row is the kernel as it is, the baseline measured in the
same run; every row says its time against it, its rate (GB/s of the bytes the maths must move, or
TFLOP/s) and, for the memory-bound tasks, its share of the device-to-device copy bandwidth measured
in the same run. A variant is timed only after its output at the task's largest GPU shape matches
the reference (and at a ragged small shape too): a wrong variant is listed as wrong, never timed.
Timing is tutor/engine/process/gpu_timing.py's (CUDA events, L2 flushed before each run, median).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.coach.tasks import load_task  # noqa: E402
from tutor.engine.gpu import import_cuda  # noqa: E402
from tutor.engine.loading.loader import load_module_for_numba  # noqa: E402
from tutor.engine.process.gpu_timing import Timer  # noqa: E402


def variants(source: str, sets: list[str]) -> list[tuple[str, str]]:
    """(label, source) for every combination of the --set values."""
    axes = []
    for spec in sets:
        name, _, values = spec.partition("=")
        if not re.search(rf"^{re.escape(name)} = ", source, flags=re.M):
            raise SystemExit(f"--set {name}: the kernel file assigns no module constant {name}")
        axes.append([(name, v) for v in values.split(",") if v])
    out = []
    for combo in itertools.product(*axes) if axes else []:
        changed = source
        for name, value in combo:
            changed = re.sub(rf"^{re.escape(name)} = [^#\n]*", f"{name} = {value}", changed, count=1, flags=re.M)
        out.append((" ".join(f"{n}={v}" for n, v in combo), changed))
    return out


def work_of(task_name: str, shape, inputs, out_shape) -> tuple[float, str]:
    if task_name == "matmul":
        m, k, n = shape
        return 2.0 * m * k * n / 1e12, "TFLOP/s"
    if task_name.startswith("attention"):
        b, h, sq, d = shape
        return 4.0 * b * h * sq * sq * d / 1e12 / (1 if task_name == "attention" else 2), "TFLOP/s"
    return (sum(x.nbytes for x in inputs) + int(np.prod(out_shape)) * 4) / 1e9, "GB/s"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("task")
    p.add_argument("--kernel", default="expert")
    p.add_argument("--set", action="append", default=[], help="NAME=v1,v2,... (repeatable)")
    p.add_argument("--file", action="append", default=[], help="another kernel file as a variant (repeatable)")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--json", default=None)
    p.add_argument("--shape", default=None, help="time at this shape (comma-separated) instead of the largest")
    args = p.parse_args()
    cuda = import_cuda()
    timer = Timer(cuda)
    task = load_task(args.task)
    base = Path(args.kernel).read_text() if args.kernel.endswith(".py") else task.source(args.kernel)
    rows = [(args.kernel, base)] + variants(base, args.set) + [(f, Path(f).read_text()) for f in args.file]
    shape = tuple(int(x) for x in args.shape.split(",")) if args.shape else task.largest_shape("gpu")
    cases = check_cases(task, shape)
    copy = _copy_gbs(cuda, timer, args.runs)
    name = device_name(cuda)
    work, unit = work_of(args.task, shape, cases[-1][1], cases[-1][2])
    print(f"device: {name}; {args.task} at {tuple(shape)}; device-to-device copy {copy:.0f} GB/s (read + write, "
          "measured now)")
    print(f"{'variant':<44} {'ms':>8} {unit:>8} {'of copy':>8} {'vs first':>9}")
    results, first = [], None
    for label, source in rows:
        try:
            ms = checked_timing(cuda, timer, task, source, cases, args.runs)["ms"]
        except Exception as e:  # noqa: BLE001 (a variant that fails is a row, not the end of the sweep)
            print(f"{label[:44]:<44} not timed: {type(e).__name__}: {str(e)[:120]}")
            results.append({"variant": label, "error": f"{type(e).__name__}: {e}"[:300]})
            continue
        first = first or ms
        rate = work / (ms / 1000)
        share = rate / copy if unit == "GB/s" else None
        print(f"{label[:44]:<44} {ms:8.4f} {rate:8.1f} {'' if share is None else f'{100 * share:7.0f}%':>8} "
              f"{first / ms:8.2f}x")
        results.append({"variant": label, "ms": ms, unit: rate, "of_copy": share})
    if args.json:
        Path(args.json).write_text(json.dumps({"device": name, "task": args.task, "shape": list(shape),
                                               "copy_GBps": copy, "rows": results}, indent=1))


def check_cases(task, shape=None) -> list:
    """(shape, inputs, out shape, float64 reference) at a ragged GPU shape, then `shape` (timed;
    the largest where none is given)."""
    inputs_mod, reference = task.module("inputs"), task.module("reference")
    shape = tuple(shape) if shape else task.largest_shape("gpu")
    cases = []
    for s in [s for s in task.shapes("gpu") if s != shape][-1:] + [shape]:
        inputs = tuple(np.ascontiguousarray(x) for x in inputs_mod.make_inputs(np.random.default_rng(0), s))
        out_shape = tuple(inputs_mod.output_shape(s))
        cases.append((s, inputs, out_shape, reference.reference(*[x.astype(np.float64) for x in inputs])))
    return cases


def checked_timing(cuda, timer, task, source: str, cases: list, runs: int) -> dict:
    """The kernel module's timing at the last case (Timer.time's: "ms", the median, and
    "host_enqueue_ms"), after its output matched the reference at every case from a NaN-filled
    `out` (ValueError where it does not: it is not timed)."""
    rtol, atol = task.tolerance
    ns = load_module_for_numba(source, "variant.py")
    for s, inputs, out_shape, expected in cases:
        d_in = [cuda.to_device(x) for x in inputs]
        d_out = cuda.to_device(np.full(out_shape, np.nan, np.float32))
        ns["launch"](d_out, *d_in)
        if not np.allclose(d_out.copy_to_host(), expected, rtol=rtol, atol=atol):
            raise ValueError(f"wrong output at {tuple(s)}")
    return timer.time(lambda: ns["launch"](d_out, *d_in), runs)


def device_name(cuda) -> str:
    dev = cuda.get_current_device()
    return dev.name.decode() if isinstance(dev.name, bytes) else dev.name


def _copy_gbs(cuda, timer, runs) -> float:
    """The device-to-device copy of 1 GiB (read + write), with Numba's own copy, timed as the kernels are."""
    src = cuda.device_array(1 << 28, dtype=np.float32)
    dst = cuda.device_array(1 << 28, dtype=np.float32)
    ms = timer.time(lambda: dst.copy_to_device(src), runs)["ms"]
    return 2 * src.nbytes / 1e9 / (ms / 1000)


if __name__ == "__main__":
    main()
