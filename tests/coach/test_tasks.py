"""Coaching tasks under kernels/: every folder is complete and parses, its naive candidate matches
the float64 reference on every sim shape on Numba's CUDA simulator, and its expert passes the
verifier on our own simulator (the experts use warp shuffles, which Numba's simulator lacks).

Numba's simulator runs in a subprocess (this file run as a script with NUMBA_ENABLE_CUDASIM=1) so
the test process keeps the real numba.
"""

import json
import os
import subprocess
import sys
import tomllib

import pytest
from task_kernels import KERNELS, compile_for_sm90, load

from tutor.coach.verify import verify

TASKS = ["reduce_sum", "softmax", "layernorm", "matmul"]
FILES = ["task.toml", "reference.py", "inputs.py", "naive.py", "expert.py"]
CANDIDATES = ["naive", "expert"]
NUMBA_SIM_CANDIDATES = ["naive"]  # Numba's simulator has no warp shuffles; the experts use them


def _run_task_on_simulator(task: str) -> list[dict]:
    """In the simulator process: run every candidate on every sim shape; one record each."""
    import numpy as np

    folder = KERNELS / task
    meta = tomllib.loads((folder / "task.toml").read_text())
    ref = load(folder / "reference.py", f"{task}_reference")
    inp = load(folder / "inputs.py", f"{task}_inputs")
    from numba import cuda

    rtol, atol = meta["tolerance"]["rtol"], meta["tolerance"]["atol"]
    records = []
    for cand in NUMBA_SIM_CANDIDATES:
        mod = load(folder / f"{cand}.py", f"{task}_{cand}")
        for shape in meta["sim_shapes"]:
            rng = np.random.default_rng(1234)
            inputs = inp.make_inputs(rng, tuple(shape))
            expected = ref.reference(*inputs)
            out_shape = tuple(inp.output_shape(tuple(shape)))
            out = cuda.to_device(np.full(out_shape, np.nan, dtype=np.float32))
            mod.launch(out, *[cuda.to_device(a) for a in inputs])
            got = out.copy_to_host()
            ok = (
                got.shape == expected.shape
                and bool(np.isfinite(got).all())
                and bool(np.allclose(got, expected, rtol=rtol, atol=atol))
            )
            err = float(np.max(np.abs(got - expected))) if got.shape == expected.shape else None
            records.append({"candidate": cand, "shape": shape, "ok": ok, "max_abs_err": err})
    return records


@pytest.mark.parametrize("task", TASKS)
def test_task_folder_is_complete_and_parses(task):
    folder = KERNELS / task
    for name in FILES:
        assert (folder / name).is_file(), f"{task}/{name} missing"
    meta = tomllib.loads((folder / "task.toml").read_text())
    for key in ["title", "statement", "inputs", "output", "tolerance", "sim_shapes", "gpu_shapes"]:
        assert key in meta, f"{task}/task.toml lacks {key}"
    assert meta["statement"].strip() and meta["title"].strip()
    assert all("name" in i and i.get("dtype", "float32") for i in meta["inputs"])
    assert meta["tolerance"]["rtol"] == pytest.approx(1e-4) and meta["tolerance"]["atol"] > 0
    assert meta["sim_shapes"] and meta["gpu_shapes"]
    ref = load(folder / "reference.py", f"{task}_reference_p")
    inp = load(folder / "inputs.py", f"{task}_inputs_p")
    assert callable(ref.reference) and callable(inp.make_inputs) and callable(inp.output_shape)
    for name in CANDIDATES:
        source = (folder / f"{name}.py").read_text()
        compile(source, f"{task}/{name}.py", "exec")
        assert source.count("\ndef launch(out,") == 1
    import numpy as np

    for shape in meta["sim_shapes"] + meta["gpu_shapes"][:2]:
        arrays = inp.make_inputs(np.random.default_rng(0), tuple(shape))
        assert len(arrays) == len(meta["inputs"])
        assert all(a.dtype == np.float32 and a.flags.c_contiguous for a in arrays)
        assert ref.reference(*arrays).shape == tuple(inp.output_shape(tuple(shape)))


@pytest.mark.parametrize("task", TASKS)
def test_naive_matches_reference_on_numbas_simulator(task):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run(
        [sys.executable, __file__, task], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    records = json.loads(proc.stdout.strip().splitlines()[-1])
    meta = tomllib.loads((KERNELS / task / "task.toml").read_text())
    assert len(records) == len(NUMBA_SIM_CANDIDATES) * len(meta["sim_shapes"])
    failed = [r for r in records if not r["ok"]]
    assert not failed, failed


@pytest.mark.parametrize("task", TASKS)
def test_expert_passes_the_verifier_on_our_simulator(task):
    result = verify(task, (KERNELS / task / "expert.py").read_text())
    assert result.passed, [f.to_json() for f in result.failures]


# Kernel signatures as the launch functions call them (float32 C-contiguous arrays, int64 sizes).
def _signatures():
    import numba

    f1, f2, i64 = numba.float32[::1], numba.float32[:, ::1], numba.int64
    return {
        "reduce_sum": {"naive": {"zero": (f1,), "add_all": (f1, f1, i64)},
                       "expert": {"zero": (f1,), "block_sums": (f1, f1, i64)}},
        "softmax": {"naive": {"softmax_rows": (f2, f2, i64, i64)},
                    "expert": {"softmax_block_per_row": (f2, f2, i64)}},
        "layernorm": {"naive": {"layernorm_rows": (f2, f2, f1, f1, i64, i64)},
                      "expert": {"layernorm_block_per_row": (f2, f2, f1, f1, i64)}},
        "matmul": {"naive": {"matmul_one_per_output": (f2, f2, f2, i64, i64, i64)},
                   "expert": {"matmul_tiled": (f2, f2, f2, i64, i64, i64)}},
    }


def _compile_task_for_sm90(task: str) -> list[dict]:
    """Without the simulator or a GPU: compile every kernel to PTX for compute capability 9.0."""
    return compile_for_sm90(task, _signatures()[task])


def _run_task_on_gpu(task: str) -> list[dict]:
    """On a real GPU: every candidate on every gpu shape, checked, and timed (median of 5)."""
    import numpy as np
    from numba import cuda

    folder = KERNELS / task
    meta = tomllib.loads((folder / "task.toml").read_text())
    ref = load(folder / "reference.py", f"{task}_reference")
    inp = load(folder / "inputs.py", f"{task}_inputs")
    rtol, atol = meta["tolerance"]["rtol"], meta["tolerance"]["atol"]
    records = []
    for shape in meta["gpu_shapes"]:
        inputs = inp.make_inputs(np.random.default_rng(1234), tuple(shape))
        expected = ref.reference(*inputs)
        d_inputs = [cuda.to_device(a) for a in inputs]
        for cand in CANDIDATES:
            mod = load(folder / f"{cand}.py", f"{task}_{cand}")
            out = cuda.to_device(np.full(tuple(inp.output_shape(tuple(shape))), np.nan, np.float32))
            mod.launch(out, *d_inputs)
            cuda.synchronize()
            got = out.copy_to_host()
            ok = bool(np.isfinite(got).all()) and bool(np.allclose(got, expected, rtol=rtol, atol=atol))
            rel = float(np.max(np.abs(got - expected) / (atol + rtol * np.abs(expected))))
            times = []
            for _ in range(5):
                start, stop = cuda.event(), cuda.event()
                start.record()
                mod.launch(out, *d_inputs)
                stop.record()
                stop.synchronize()
                times.append(cuda.event_elapsed_time(start, stop))
            records.append({"candidate": cand, "shape": shape, "ok": ok,
                            "err_over_tol": rel, "ms": sorted(times)[2]})
    return records


@pytest.mark.parametrize("task", TASKS)
def test_kernels_compile_for_sm90_without_a_gpu(task):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run([sys.executable, __file__, "--ptx", task], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    records = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(records) == sum(len(k) for k in _signatures()[task].values())
    # The expert's register arrays (micro-tiles, accumulators) must not spill to local memory.
    assert all(r["local_memory_ops"] == 0 for r in records if r["candidate"] == "expert"), records


@pytest.mark.gpu
@pytest.mark.parametrize("task", TASKS)
def test_gpu_shapes_match_reference_on_a_real_gpu(task):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run([sys.executable, __file__, "--gpu", task], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    records = json.loads(proc.stdout.strip().splitlines()[-1])
    assert all(r["ok"] for r in records), records


if __name__ == "__main__":
    if sys.argv[1] == "--ptx":
        print(json.dumps(_compile_task_for_sm90(sys.argv[2])))
    elif sys.argv[1] == "--gpu":
        for name in sys.argv[2:]:
            print(json.dumps(_run_task_on_gpu(name)), flush=True)
    else:
        assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
        print(json.dumps(_run_task_on_simulator(sys.argv[1])))
