"""Time the PTX build_ptx.py wrote, on a GPU, with CuPy alone (no Numba there): each kernel at the
task's scored shape, launched as its module's launch() launches it. Median of RUNS, CUDA events.

    python3 tests/coach/model_attacks/gpu/run_ptx.py
"""
import json
import sys
from pathlib import Path

import cupy as cp
import numpy as np

HERE = Path(__file__).resolve().parent
RUNS = 5
index = json.loads((HERE / "index.json").read_text())


def arr(a):
    """Numba's flattened array argument: meminfo, parent, nitems, itemsize, data, shape, strides."""
    return [np.uint64(0), np.uint64(0), np.int64(a.size), np.int64(a.itemsize), a] + \
        [np.int64(s) for s in a.shape] + [np.int64(s) for s in a.strides]


def fn(key):
    mod = cp.RawModule(path=str(HERE / f"{key}.ptx"))
    return mod.get_function(index[key]["entry"])


def timed(launch):
    launch()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(RUNS):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        launch()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
    return float(np.median(times))


rng = np.random.default_rng(0)
results = {}
n = 20011
x = cp.asarray(rng.random(n, dtype=np.float32))
out = cp.zeros(1, dtype=cp.float32)
for name in ["naive", "expert", "while_continuation", "one_line_sqrt_chain", "opt_false_dead_loop",
             "fmod_library_loop", "shared_same_address_atomics"]:
    try:
        z = fn(f"reduce_sum__{name}__zero")
        if name == "naive":
            k = fn("reduce_sum__naive__add_all")
            launch = lambda: (z((1,), (1,), arr(out)), k(((n + 255) // 256,), (256,), arr(out) + arr(x) + [np.int64(n)]))
        else:
            k = fn(f"reduce_sum__{name}__block_sums")
            blocks = min(132 * 4, max(1, (n + 4095) // 4096))
            launch = lambda: (z((1,), (32,), arr(out)), k((blocks,), (512,), arr(out) + arr(x) + [np.int64(n)]))
        us = timed(launch)
        ok = abs(float(out.get()[0]) - float(x.get().astype(np.float64).sum())) < 1e-3 * n
        results[f"reduce_sum/{name}"] = (us, ok)
    except Exception as e:  # noqa: BLE001
        results[f"reduce_sum/{name}"] = (None, repr(e)[:200])
    print(f"reduce_sum/{name}", results[f"reduce_sum/{name}"], flush=True)

rows, cols = 4, 3001
xs = cp.asarray(rng.standard_normal((rows, cols), dtype=np.float32))
o2 = cp.zeros((rows, cols), dtype=cp.float32)
xh = xs.get().astype(np.float64)
ref = np.exp(xh - xh.max(1, keepdims=True))
ref /= ref.sum(1, keepdims=True)
for name in ["naive", "expert", "nanosleep", "cheapest_inlined_copy", "local_load_hides_branch", "line_zero_merged_arms"]:
    try:
        if name == "naive":
            k = fn("softmax__naive__softmax_rows")
            launch = lambda: k(((rows + 127) // 128,), (128,), arr(o2) + arr(xs) + [np.int64(rows), np.int64(cols)])
        else:
            k = fn(f"softmax__{name}__softmax_block_per_row")
            launch = lambda: k((rows,), (256,), arr(o2) + arr(xs) + [np.int64(cols)])
        us = timed(launch)
        ok = float(np.abs(o2.get() - ref).max()) < 1e-5
        results[f"softmax/{name}"] = (us, ok)
    except Exception as e:  # noqa: BLE001
        results[f"softmax/{name}"] = (None, repr(e)[:200])
    print(f"softmax/{name}", results[f"softmax/{name}"], flush=True)
print(cp.cuda.runtime.getDeviceProperties(0)["name"])
json.dump(results, open(sys.argv[1] if len(sys.argv) > 1 else "/dev/null", "w"), indent=1)
