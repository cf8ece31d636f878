"""Compile each attack's kernels to PTX HERE (no GPU needed), with the options the decorator gives
(opt, fastmath, debug), as the real launch would; run_ptx.py times them on a GPU with CuPy alone.

    PYTHONPATH=$PWD python tests/coach/model_attacks/gpu/build_ptx.py
"""
import json
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT))
HERE = Path(__file__).resolve().parent
warnings.simplefilter("ignore")

import numba  # noqa: E402
from numba import cuda, float32, int64  # noqa: E402

from tutor.engine.loading.compile import no_device_needed, signatures_deferred  # noqa: E402
from tutor.engine.loading.loader import load_module_for_numba  # noqa: E402

A1, A2 = float32[::1], float32[:, ::1]
RS = {"zero": (A1,), "block_sums": (A1, A1, int64), "add_all": (A1, A1, int64)}
SM = {"softmax_block_per_row": (A2, A2, int64), "softmax_rows": (A2, A2, int64, int64)}
FILES = {
    "reduce_sum": ["kernels/reduce_sum/naive.py", "kernels/reduce_sum/expert.py"]
    + [f"tests/coach/model_attacks/reduce_sum/{n}.py" for n in
       ("while_continuation", "one_line_sqrt_chain", "opt_false_dead_loop", "fmod_library_loop",
        "shared_same_address_atomics")],
    "softmax": ["kernels/softmax/naive.py", "kernels/softmax/expert.py"]
    + [f"tests/coach/model_attacks/softmax/{n}.py" for n in
       ("nanosleep", "cheapest_inlined_copy", "local_load_hides_branch", "line_zero_merged_arms")],
}
out = {}
for task, files in FILES.items():
    sigs = RS if task == "reduce_sum" else SM
    for f in files:
        src = (ROOT / f).read_text()
        with no_device_needed(), signatures_deferred():
            ns = load_module_for_numba(src, "candidate.py")
        for name, sig in sigs.items():
            k = ns.get(name)
            if k is None:
                continue
            opts = {o: k.targetoptions[o] for o in ("opt", "fastmath", "debug") if o in k.targetoptions}
            with no_device_needed():
                ptx, _ = cuda.compile_ptx(k.py_func, sig, cc=(9, 0), **opts)
            key = f"{task}__{Path(f).stem}__{name}"
            (HERE / f"{key}.ptx").write_text(ptx)
            entry = [l for l in ptx.splitlines() if ".entry" in l][0].split(".entry")[1].split("(")[0].strip()
            out[key] = {"entry": entry, "opts": {k2: str(v) for k2, v in opts.items()}}
            print(key, opts, len(ptx))
(HERE / "index.json").write_text(json.dumps(out, indent=1))
