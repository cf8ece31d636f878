"""Does the modelled time rank kernels as the H200 does? Modelled (simulator) against measured (GPU).

    python bench/modelled_time.py                          # modelled times, every task and candidate
    python bench/modelled_time.py --tasks reduce_sum       # some tasks (candidates of other tasks left out)
    python bench/modelled_time.py --gpu --json gpu.json    # on the GPU machine: measured, and modelled too
    python bench/modelled_time.py --measured gpu.json      # here: the model against those measurements

Rows: the naive and expert kernels of every task under kernels/, and the verifier's honest
candidates. Those are correct, not cheating, and taken from the tests as they stand:
test_verify.py's HONEST scale and dynamic-shared reduction, test_verify_gpu.py's HEAVY with its
skip removed, and modelled_kernels.py's four ways to scale an array. Each row runs at the shape the
optimiser scores: the task's `sim_scored`, or its largest simulator shape where it has none. Its
inputs are the ones the verifier scores on (a seed of the task's name), so the GPU runs the same
shape and inputs. A digest of the inputs goes with each row to show that.

modelled  tutor.engine.analysis.modelled_time on the simulator's trace of one launch(): a model, not a
          measurement. Its figures are chosen in advance and never fitted to these measurements.
measured  tutor.engine.process.gpu_timing's Timer (L2 flushed and the GPU held before every run, device
          time by CUDA events), median of --runs, launch() of the same module with the real Numba.

The figure is Spearman's rank correlation between the two columns, over every row and task by
task (ranks of tied values averaged). A task with two rows can only give +1 or -1. --gpu imports
numba-cuda and numpy alone, plus greenlet for the modelled column (skipped, and said so, without it).
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import sys
import tempfile
import textwrap
import zlib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TESTS = ROOT / "tests" / "coach"
TARGET = 0.9  # the rank correlation the issue asks of the model
RUNS = 30


@dataclass
class Case:
    task: str
    kernel: str
    source: str
    root: Path | None = None  # the folder holding the task's folder; None: kernels/
    kind: str = "honest"      # naive, expert, or the calibration kernel's kind (tests/coach/calibration)

    def load(self):
        from tutor.coach.tasks import load_task

        return load_task(self.task, self.root)


def cases(only=None, tmp: Path | None = None) -> list[Case]:
    """Every task's naive and expert kernels, then the honest candidates from the tests (whose own
    small tasks are written under `tmp`)."""
    from tutor.coach.tasks import coaching_tasks

    out = []
    for task in coaching_tasks():
        if only is None or task.name in only:
            out += [Case(task.name, kernel, task.source(kernel), kind=kernel) for kernel in ("naive", "expert")]
    calibration = TESTS / "calibration" / "__init__.py"
    if calibration.exists():  # kernels written to stress the model: compute, latency, divergence, local memory
        for task, name, kind, path in _module(calibration).kernels():
            if (only is None or task in only) and kind not in ("naive", "expert"):
                out.append(Case(task, name, Path(path).read_text(), kind=kind))
    # correct candidates written to fool the model (an adversary's, each a way the counting could lose work)
    for path in sorted((TESTS / "model_attacks").glob("*/*.py")):
        task = path.parent.name
        if (only is None or task in only) and (ROOT / "kernels" / task).is_dir():
            out.append(Case(task, path.stem, path.read_text(), kind="attack"))
    verify_tests = _strings(TESTS / "test_verify.py", ["TASK_TOML", "REFERENCE", "INPUTS", "HEAD", "HONEST",
                                                      "DYNAMIC_SHARED_REDUCE_SUM"])
    gpu_tests = _strings(TESTS / "test_verify_gpu.py", ["HEAVY"], {"HEAD": verify_tests["HEAD"]})
    scale_root = tmp / "verify"
    folder = scale_root / "scale"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("task.toml", "TASK_TOML"), ("reference.py", "REFERENCE"), ("inputs.py", "INPUTS")):
        (folder / name).write_text(verify_tests[text])
    honest = [Case("reduce_sum", "dynamic shared (test_verify)", verify_tests["DYNAMIC_SHARED_REDUCE_SUM"]),
              Case("scale", "honest (test_verify)", verify_tests["HONEST"], scale_root),
              Case("scale", "heavy (test_verify_gpu)", gpu_tests["HEAVY"].replace("SKIP", "pass"), scale_root)]
    kernels = _module(TESTS / "modelled_kernels.py")
    kernels.write_task(tmp / "modelled")
    honest += [Case(kernels.TASK, name, source, tmp / "modelled") for name, source in kernels.CANDIDATES.items()]
    return out + [c for c in honest if only is None or c.task in only]


def scored_inputs(case: Case):
    """(task, shape, inputs, their digest): the shape the optimiser scores and the verifier's inputs there."""
    import numpy as np

    task = case.load()
    shape = task.scored_shape() or task.largest_shape("sim")
    inputs = [np.ascontiguousarray(x) for x in
              task.module("inputs").make_inputs(np.random.default_rng(zlib.crc32(task.name.encode())), shape)]
    digest = 0
    for x in inputs:
        digest = zlib.crc32(x.tobytes(), digest)
    return task, tuple(shape), inputs, f"{digest:08x}"


def modelled(case: Case) -> dict:
    """The simulator's trace of one launch() and its modelled time, with whether it was right."""
    import numpy as np

    from tutor.engine.sim.devicearray import DeviceArray
    from tutor.engine.analysis.modelled_time import modelled_time
    from tutor.engine.sim.launch import records
    from tutor.engine.loading.sim_loader import load_module_for_sim

    task, shape, inputs, digest = scored_inputs(case)
    out = np.full(tuple(task.module("inputs").output_shape(shape)), np.nan, dtype=np.float32)
    from tutor.engine.loading.compile import launches_ptx
    from tutor.engine.sim.linecounts import LineRuns

    module = load_module_for_sim(case.source, "candidate.py")
    with records(module.cuda, trace_local=False) as done, LineRuns(module.cuda, "candidate.py", case.source):
        module.namespace["launch"](DeviceArray(out, "out"),
                                   *[DeviceArray(x.copy(), f"input:{i}") for i, x in enumerate(inputs)])
    ptx = launches_ptx(case.source, "candidate.py", done.launches)
    model = modelled_time([t for t, _ in done.traces], case.source, "h200", names=[k for k, _ in done.launches],
                          ptx=[ptx.get(k) for k in done.launches])
    bounds = sorted({k.bound for k in model.kernels}, key=[k.bound for k in model.kernels].index)
    return {"task": case.task, "kernel": case.kernel, "shape": list(shape), "digest": digest,
            "modelled_us": model.seconds * 1e6, "bound": ", ".join(bounds), "kernels": len(model.kernels),
            "sim_ok": _right(task, inputs, out)}


def measured(case: Case, runs: int) -> dict:
    """Median device time of launch() on the GPU, as gpu_timing times every launch we judge."""
    import numpy as np

    from tutor.engine.gpu import import_cuda
    from tutor.engine.process.gpu_timing import Timer
    from tutor.engine.loading.loader import load_module_for_numba

    cuda = import_cuda()
    task, shape, inputs, digest = scored_inputs(case)
    out_shape = tuple(task.module("inputs").output_shape(shape))
    launch = load_module_for_numba(case.source, "candidate.py")["launch"]
    d_inputs = [cuda.to_device(x) for x in inputs]
    d_out = cuda.device_array(out_shape, dtype=np.float32)
    poison = np.full(out_shape, np.nan, dtype=np.float32)
    timed = Timer(cuda).time(lambda: launch(d_out, *d_inputs), runs, reset=lambda: d_out.copy_to_device(poison))
    return {"task": case.task, "kernel": case.kernel, "shape": list(shape), "digest": digest,
            "measured_us": timed["ms"] * 1e3, "runs": runs, "host_enqueue_us": timed["host_enqueue_ms"] * 1e3,
            "enqueue_outlasted_hold": timed["enqueue_outlasted_hold"],
            "gpu_ok": _right(task, inputs, d_out.copy_to_host())}


def spearman(a, b) -> float:
    """Spearman's rank correlation: Pearson's over the ranks, ties given their mean rank."""
    import numpy as np

    ra, rb = _ranks(a), _ranks(b)
    if len(ra) < 2 or ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", default=None, help="comma-separated task names (default: every task)")
    parser.add_argument("--gpu", action="store_true", help="measure every row on this machine's GPU")
    parser.add_argument("--no-model", action="store_true", help="with --gpu: measure only")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"timed runs per row, median taken (default {RUNS})")
    parser.add_argument("--measured", default=None, help="a --gpu run's JSON: its measured times against the model")
    parser.add_argument("--json", default=None, help="write the rows here as JSON")
    parser.add_argument("--modelled", default=None,
                        help="an earlier run's JSON: take its modelled column instead of modelling again")
    parser.add_argument("--card", default=None, help="with --measured: the GPU that measured them (e.g. 'H100 SXM')")
    parser.add_argument("--calibration", default=None,
                        help="with --measured: write what the verifier reads (tutor/engine/analysis/calibration.json)")
    args = parser.parse_args(argv)
    only = set(args.tasks.split(",")) if args.tasks else None
    with tempfile.TemporaryDirectory() as tmp:
        todo = cases(only, Path(tmp))
        rows = [{"task": c.task, "kernel": c.kernel, "kind": c.kind} for c in todo]
        notes = []
        if args.gpu:
            for row, case in zip(rows, todo):
                row.update(measured(case, args.runs))
                print(f"measured {case.task} / {case.kernel}: {row['measured_us']:.2f} us", file=sys.stderr, flush=True)
        if args.modelled:  # an earlier run's modelled column, matched by task and kernel
            earlier = {(r["task"], r["kernel"]): r for r in json.loads(Path(args.modelled).read_text())}
            for row in rows:
                row.update({k: v for k, v in earlier.get((row["task"], row["kernel"]), {}).items()
                            if k not in row and k not in ("measured_us", "runs", "host_enqueue_us",
                                                          "enqueue_outlasted_hold", "gpu_ok")})
        elif not (args.gpu and args.no_model):
            try:
                for row, case in zip(rows, todo):
                    row.update({k: v for k, v in modelled(case).items() if k not in row})
            except ImportError as e:  # a GPU machine without the simulator's greenlet
                notes.append(f"no modelled times here ({e}): run without --gpu, with --measured, elsewhere")
    if args.measured:
        notes += _merge(rows, json.loads(Path(args.measured).read_text()))
    _print(rows, notes)
    if args.calibration:
        record = calibration(rows, args.card or "unnamed GPU")
        Path(args.calibration).write_text(json.dumps(record, indent=1) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


def _merge(rows: list, gpu: list) -> list[str]:
    """Measured times from a --gpu run's rows, matched by task and kernel; the shape and the
    inputs' digest must be the same, or the row says so."""
    by = {(r.get("task"), r.get("kernel")): r for r in gpu if isinstance(r, dict)}
    notes, missing = [], []
    for row in rows:
        g = by.get((row["task"], row["kernel"]))
        if not g or "measured_us" not in g:
            missing.append(f"{row['task']} / {row['kernel']}")
            continue
        for key in ("measured_us", "runs", "host_enqueue_us", "enqueue_outlasted_hold", "gpu_ok"):
            if key in g:
                row[key] = g[key]
        if g.get("shape") != row.get("shape") or g.get("digest") != row.get("digest"):
            row["inputs_differ"] = True
            notes.append(f"{row['task']} / {row['kernel']}: the GPU ran shape {g.get('shape')} inputs {g.get('digest')}, "
                         f"the simulator {row.get('shape')} inputs {row.get('digest')}")
    if missing:
        notes.append("not measured: " + "; ".join(missing))
    return notes


def _over_naive(rows: list) -> None:
    """Each row's speedup over its task's naive kernel, modelled and measured ("x_model", "x_gpu")."""
    naive = {r["task"]: r for r in rows if r.get("kernel") == "naive"}
    for r in rows:
        base = naive.get(r["task"])
        if not base:
            continue
        for key, out in (("modelled_us", "x_model"), ("measured_us", "x_gpu")):
            if r.get(key) and base.get(key):
                r[out] = base[key] / r[key]


def disagreements(rows: list) -> list[dict]:
    """The rows the model places faster than their task's naive kernel that the GPU measured slower:
    the one error a score must never make (a slower kernel kept as the best and shown as faster)."""
    return [r for r in rows if r.get("x_model", 0) > 1 and 0 < r.get("x_gpu", 2) < 1]


def calibration(rows: list, card: str) -> dict:
    """What the verifier reads (tutor/engine/analysis/calibration.json): per task, the largest
    speedup over naive the GPU confirmed; per bound, whether any kernel of that bound was placed
    faster than naive and measured slower (such a bound's scores are "modelled; unconfirmed")."""
    both = [r for r in rows if r.get("x_model") and r.get("x_gpu")]
    tasks: dict = {}
    for r in both:
        t = tasks.setdefault(r["task"], {"confirmed_up_to": 1.0, "kernels": 0})
        t["kernels"] += 1
        if r["x_model"] > 1 and r["x_gpu"] > 1:
            t["confirmed_up_to"] = max(t["confirmed_up_to"], min(r["x_model"], r["x_gpu"]))
    wrong = disagreements(both)
    bounds = sorted({b.strip() for r in wrong for b in r.get("bound", "").split(",") if b.strip()})
    rho = spearman([r["modelled_us"] for r in both], [r["measured_us"] for r in both]) if len(both) > 1 else None
    return {"card": card, "rows": len(both), "spearman": rho, "tasks": tasks, "unconfirmed_bounds": bounds,
            "disagreements": [f"{r['task']}/{r['kernel']}" for r in wrong]}


def _print(rows: list, notes: list) -> None:
    _over_naive(rows)
    head = ["task", "kernel", "kind", "shape", "modelled us", "bound", "measured us", "x naive (model)",
            "x naive (GPU)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        m, g = r.get("modelled_us"), r.get("measured_us")
        flags = [f for f, bad in (("wrong on the simulator", r.get("sim_ok") is False),
                                  ("wrong on the GPU", r.get("gpu_ok") is False),
                                  ("inputs differ", r.get("inputs_differ")),
                                  ("enqueue outlasted the hold", r.get("enqueue_outlasted_hold")),
                                  ("MODEL FASTER THAN NAIVE, GPU SLOWER", r in disagreements([r]))) if bad]
        cells = [r["task"], r["kernel"], r.get("kind", "-"), str(tuple(r.get("shape") or ())),
                 f"{m:.2f}" if m is not None else "-", r.get("bound", "-"), f"{g:.2f}" if g is not None else "-",
                 f"{r['x_model']:.3g}" if r.get("x_model") else "-", f"{r['x_gpu']:.3g}" if r.get("x_gpu") else "-"]
        print("| " + " | ".join(cells) + " |" + (f" ({'; '.join(flags)})" if flags else ""))
    both = [r for r in rows if r.get("modelled_us") is not None and r.get("measured_us") is not None]
    print()
    print("modelled: tutor.engine.analysis.modelled_time, a model of the NVIDIA H200 from the simulator's trace and "
          "the PTX Numba compiles. Its figures were chosen in advance, not fitted to these measurements; it leaves "
          "out registers, cache capacity and how often a branch is taken.")
    if both:
        rho = spearman([r["modelled_us"] for r in both], [r["measured_us"] for r in both])
        verdict = "met" if rho >= TARGET else "missed"
        print(f"Spearman rank correlation, modelled against measured, over {len(both)} rows: {rho:.3f} "
              f"(target {TARGET}: {verdict})")
        wrong = disagreements(both)
        faster = [r for r in both if r.get("x_model", 0) > 1]
        print(f"Placed faster than their naive kernel by the model: {len(faster)}; of those, slower on the GPU: "
              f"{len(wrong)}" + (" (" + ", ".join(f"{r['task']}/{r['kernel']}" for r in wrong) + ")" if wrong else ""))
        for task in dict.fromkeys(r["task"] for r in both):
            mine = [r for r in both if r["task"] == task]
            rho_t = spearman([r["modelled_us"] for r in mine], [r["measured_us"] for r in mine])
            order = ("same order" if math.isclose(rho_t, 1) else "reversed" if math.isclose(rho_t, -1)
                     else f"{rho_t:.3f}")
            print(f"  {task}: {len(mine)} rows, {order}" if not math.isnan(rho_t) else f"  {task}: {len(mine)} row(s)")
    else:
        print("No measured times: run with --gpu on the GPU machine (--json FILE), then here with --measured FILE.")
    for note in notes:
        print(f"note: {note}")


def _ranks(values):
    import numpy as np

    v = np.asarray(values, dtype=float)
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(len(v))
    ranks[order] = np.arange(1, len(v) + 1)
    for value in np.unique(v):  # ties share their mean rank
        same = v == value
        if same.sum() > 1:
            ranks[same] = ranks[same].mean()
    return ranks


def _right(task, inputs, got) -> bool:
    import numpy as np

    rtol, atol = task.tolerance
    expected = task.module("reference").reference(*[x.astype(np.float64) for x in inputs])
    return bool(np.shape(got) == np.shape(expected) and np.isfinite(got).all()
                and np.allclose(got, expected, rtol=rtol, atol=atol))


def _strings(path: Path, names: list, given: dict | None = None) -> dict:
    """The module-level strings `names` of a test file, evaluated from its source without running
    the file (it imports pytest and the verifier): each is literals, textwrap.dedent, + and
    .replace of earlier ones."""
    found = dict(given or {})
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in names:
                try:
                    found[name] = eval(compile(ast.Expression(node.value), str(path), "eval"),
                                       {"__builtins__": {}, "textwrap": textwrap}, dict(found))
                except Exception:  # noqa: BLE001 (an assignment that is not a plain string)
                    continue
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"{path.name} no longer defines {', '.join(missing)}: update bench/modelled_time.py")
    return found


def _module(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "0")
    sys.exit(main())
