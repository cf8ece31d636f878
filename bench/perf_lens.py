"""The performance lens's counters, from the simulator's trace, and (with --ncu) against Nsight Compute.

    python bench/perf_lens.py                 # our counters for every puzzle reference, every fixed config
    python bench/perf_lens.py --ncu [--json out.json]   # on a GPU machine with ncu: the same launches, measured
    python bench/perf_lens.py --tasks reduce_sum,softmax [--ncu]   # coaching tasks' naive and expert launch()

With --ncu every puzzle's reference is launched on the GPU with the same inputs, config by config,
in one process profiled by ncu (the metrics below); our simulator runs the same configs; the table
puts the two side by side per kernel, with "=" where they agree exactly. ncu's active-lanes ratio
counts every instruction and ours only memory instructions, so that column is shown, not compared.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.engine.judge import plan, run_sim  # noqa: E402
from tutor.engine.analysis.counters import count  # noqa: E402
from tutor.puzzles import load_catalog  # noqa: E402

SEED = 7
METRICS = {
    "ld_req": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "ld_sec": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "st_req": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "st_sec": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "sh_ld_conf": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "sh_st_conf": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
}
# a global atomic whose result is unused compiles to RED, one that is used to ATOM: ours counts both
SUMS = {"atom_req": ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
                     "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum")}
LANES = "smsp__thread_inst_executed_per_inst_executed.ratio"
COMPARED = list(METRICS) + list(SUMS)


def files(pids, starters: bool) -> list[tuple[str, str]]:
    """(puzzle, file) to launch: every reference, and with --starters a performance puzzle's
    starter too (right and slow: the counter it fails on is measured as well)."""
    catalog = load_catalog()
    out = []
    for pid in pids:
        out.append((pid, "reference.py"))
        if starters and catalog.get(pid).perf:
            out.append((pid, "starter.py"))
    return out


def ours(pids, starters: bool = False) -> list[dict]:
    """Our counters, per puzzle and fixed config, on the inputs the GPU run gets too."""
    catalog = load_catalog()
    rows = []
    for pid, name in files(pids, starters):
        puzzle = catalog.get(pid)
        source = puzzle.read(name)
        planned = plan(puzzle, SEED, 0)
        result = run_sim(puzzle, source, name, [(p.config, p.inputs) for p in planned], compile=False)
        label = pid if name == "reference.py" else f"{pid} starter"
        for run in result.runs:
            rows.append(_row(label, run.config.name, count(run.trace, source)))
    return rows


def _row(what: str, config: str, counters) -> dict:
    from tutor.engine.trace import GLOBAL

    m = counters.metrics()
    return {"puzzle": what, "config": config, **{k: m[v] for k, v in METRICS.items()},
            "atom_req": counters.total(GLOBAL, "atom", "requests"),
            "lanes": m["smsp__thread_inst_executed_per_inst_executed.ratio (memory instructions)"],
            "uneven": len(counters.notes) > 1}  # a line after a `continue`: requests may be a lower bound


def ours_tasks(tasks) -> list[dict]:
    """Our counters for each coaching task's naive and expert launch() at its largest simulator
    shape, kernel launch by kernel launch, on the inputs the GPU run gets too."""
    import numpy as np

    from tutor.coach.tasks import load_task
    from tutor.engine.sim.devicearray import DeviceArray
    from tutor.engine.sim.launch import records
    from tutor.engine.loading.sim_loader import load_module_for_sim

    rows = []
    for name in tasks:
        task = load_task(name)
        shape = tuple(task.data["sim_shapes"][-1])
        inputs = task.module("inputs").make_inputs(np.random.default_rng(SEED), shape)
        out_shape = tuple(task.module("inputs").output_shape(shape))
        for cand in ("naive", "expert"):
            source = task.source(cand)
            module = load_module_for_sim(source, f"{cand}.py")
            out = np.full(out_shape, np.nan, dtype=np.float32)
            with records(module.cuda, trace_local=False) as done:
                module.namespace["launch"](DeviceArray(out, "out"),
                                           *[DeviceArray(x.copy(), f"input:{i}") for i, x in enumerate(inputs)])
            for n, (trace, _) in enumerate(done.traces):
                rows.append(_row(f"{name} {cand}", f"{shape}, kernel {n + 1}", count(trace, source)))
    return rows


TASK_LAUNCHER = """
import sys
sys.path.insert(0, {root!r})
import numpy as np
from tutor.coach.tasks import load_task
from tutor.engine.gpu import import_cuda
from tutor.engine.loading.loader import load_module_for_numba
cuda = import_cuda()
for name in {tasks!r}:
    task = load_task(name)
    shape = tuple(task.data["sim_shapes"][-1])
    inputs = task.module("inputs").make_inputs(np.random.default_rng({seed}), shape)
    out_shape = tuple(task.module("inputs").output_shape(shape))
    for cand in ("naive", "expert"):
        launch = load_module_for_numba(task.source(cand), cand + ".py")["launch"]
        d_out = cuda.to_device(np.full(out_shape, np.nan, dtype=np.float32))
        launch(d_out, *[cuda.to_device(x.copy()) for x in inputs])
        cuda.synchronize()
"""


LAUNCHER = """
import sys
sys.path.insert(0, {root!r})
import numpy as np
from tutor.engine.judge import fresh_output, plan
from tutor.engine.gpu import import_cuda
from tutor.engine.loading.loader import load_for_numba
from tutor.puzzles import load_catalog
cuda = import_cuda()
catalog = load_catalog()
for pid, name in {files!r}:
    puzzle = catalog.get(pid)
    kernel = load_for_numba(puzzle.read(name), name, puzzle.signature)["kernel"]
    for p in plan(puzzle, {seed}, 0):
        args = [fresh_output(p.config)] + list(p.inputs.values())
        dargs = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        kernel[tuple(p.config.blocks), tuple(p.config.threads)](*dargs)
        cuda.synchronize()
"""


def measured(pids, tasks=(), starters: bool = False) -> list[dict]:
    """ncu's counters for the same launches, in launch order."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "launch.py"
        script.write_text(LAUNCHER.format(root=str(ROOT), files=files(pids, starters), seed=SEED) if pids else
                          TASK_LAUNCHER.format(root=str(ROOT), tasks=list(tasks), seed=SEED))
        done = subprocess.run(["ncu", "--csv", "--target-processes", "all", "--metrics",
                               ",".join(list(METRICS.values()) + [m for ms in SUMS.values() for m in ms] + [LANES]), sys.executable, str(script)],
                              capture_output=True, text=True, timeout=1500)
    if done.returncode != 0:
        raise SystemExit(f"ncu failed ({done.returncode}):\n{done.stderr[-3000:]}\n{done.stdout[-3000:]}")
    text = done.stdout[done.stdout.index('"ID"'):]
    kernels: dict = {}
    for row in csv.DictReader(io.StringIO(text)):
        k = kernels.setdefault(int(row["ID"]), {"kernel": row["Kernel Name"]})
        value = row["Metric Value"].replace(",", "")
        name = next((s for s, m in METRICS.items() if m == row["Metric Name"]), None)
        if name:
            k[name] = int(float(value))
        elif row["Metric Name"] == LANES:
            k["lanes"] = float(value)
        for total, parts in SUMS.items():
            if row["Metric Name"] in parts:
                k[total] = k.get(total, 0) + int(float(value))
    return [kernels[i] for i in sorted(kernels)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ncu", action="store_true", help="measure the same launches with Nsight Compute")
    parser.add_argument("--puzzles", default=None, help="comma-separated puzzle ids (default: every puzzle)")
    parser.add_argument("--json", default=None, help="write the rows here as JSON")
    parser.add_argument("--starters", action="store_true",
                        help="also each performance puzzle's starter (right, and slow on a counter)")
    parser.add_argument("--tasks", default=None,
                        help="comma-separated coaching tasks, naive and expert at the largest simulator shape, "
                             "instead of the puzzles")
    args = parser.parse_args()
    tasks = args.tasks.split(",") if args.tasks else []
    pids = [] if tasks else args.puzzles.split(",") if args.puzzles else load_catalog().ids()
    sim = ours_tasks(tasks) if tasks else ours(pids, args.starters)
    rows = sim
    if args.ncu:
        gpu = measured(pids, tasks, args.starters)
        if len(gpu) != len(sim):
            raise SystemExit(f"ncu saw {len(gpu)} kernels, the simulator ran {len(sim)} configs")
        rows = [{**s, **{f"ncu_{k}": g.get(k) for k in COMPARED + ["lanes"]}} for s, g in zip(sim, gpu)]
    head = ["puzzle", "config"] + COMPARED + ["lanes"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    exact = total = 0
    for r in rows:
        cells = [r["puzzle"] + (" (uneven)" if r.get("uneven") else ""), r["config"]]
        for k in COMPARED:
            if args.ncu:
                same = r[k] == r[f"ncu_{k}"]
                exact += same
                total += 1
                cells.append(f"{r[k]} =" if same else f"{r[k]} / ncu {r[f'ncu_{k}']}")
            else:
                cells.append(str(r[k]))
        cells.append(f"{r['lanes']}" + (f" / ncu {r['ncu_lanes']}" if args.ncu else ""))
        print("| " + " | ".join(cells) + " |")
    if any(r.get("uneven") for r in rows):
        print("\n(uneven): some line follows a `continue`; where a warp's lanes skip different iterations the "
              "GPU issues one request per iteration any lane is in, more than the trace's grouping counts "
              "(sectors stay the same)")
    if args.ncu:
        print(f"\n{exact} of {total} counters equal to ncu's ({exact / total:.0%}); lanes: ncu counts every "
              "instruction, the trace only memory instructions (shown, not compared)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "0")
    sys.exit(main())
