"""Per line: the model's cost per run (from the PTX it compiles) and the runs the tracer counted.

    PYTHONPATH=$PWD python tests/coach/model_attacks/inspect_lines.py TASK FILE
"""
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
from modelled_time import Case, scored_inputs  # noqa: E402

from tutor.engine.analysis.instructions import line_costs  # noqa: E402
from tutor.engine.loading.compile import launches_ptx  # noqa: E402
from tutor.engine.loading.sim_loader import load_module_for_sim  # noqa: E402
from tutor.engine.sim.devicearray import DeviceArray  # noqa: E402
from tutor.engine.sim.launch import records  # noqa: E402
from tutor.engine.sim.linecounts import LineRuns, statement_lines  # noqa: E402


def main():
    task, path = sys.argv[1], Path(sys.argv[2])
    src = path.read_text()
    lines = src.splitlines()
    case = Case(task, path.stem, src)
    t, shape, inputs, _ = scored_inputs(case)
    out = np.full(tuple(t.module("inputs").output_shape(shape)), np.nan, dtype=np.float32)
    module = load_module_for_sim(src, "candidate.py")
    with records(module.cuda, trace_local=False) as done, LineRuns(module.cuda, "candidate.py", src):
        module.namespace["launch"](DeviceArray(out, "out"),
                                   *[DeviceArray(x.copy(), f"input:{i}") for i, x in enumerate(inputs)])
    ptx = launches_ptx(src, "candidate.py", done.launches)
    for (trace, _), key in zip(done.traces, done.launches):
        print("kernel", key[0])
        p = ptx.get(key)
        if "--ptx" in sys.argv and p:
            Path(f"/tmp/{path.stem}.{key[0]}.ptx").write_text(p)
        costs = line_costs(p, None, statement_lines(src)) if p else {}
        runs = Counter()
        for keys in (trace.line_runs or {}).values():
            for _, line, _, _ in keys:
                runs[line] += 1
        for line in sorted(set(costs) | set(runs)):
            c = costs.get(line)
            print(f"  {line:4d} runs {runs.get(line, 0):8d} issue {c.issue if c else 0:8.1f} lat {c.latency if c else 0:8.1f}"
                  f"  {lines[line - 1].strip()[:60]}")


if __name__ == "__main__":
    main()
