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


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
@pytest.mark.parametrize("task", TASKS)
def test_expert_passes_the_verifier_on_our_simulator(task):
    result = verify(task, (KERNELS / task / "expert.py").read_text())
    assert result.passed, [f.to_json() for f in result.failures]


# The least each dimension of the drawn simulator shape may be: past a block of 1024 threads, a 64
# tile, or 64 blocks of 1024 threads adding one element each.
DRAWN_AT_LEAST = {"reduce_sum": {"n": 65537}, "softmax": {"rows": 2, "cols": 1025},
                  "layernorm": {"rows": 2, "cols": 1025}, "matmul": {"m": 65, "k": 65, "n": 65}}
DRAWN_NEVER_A_MULTIPLE_OF = {"reduce_sum": 2, "softmax": 32, "layernorm": 32, "matmul": 16}


@pytest.mark.parametrize("task", TASKS)
def test_the_drawn_shape_is_past_every_tile_a_kernel_might_assume(task):
    import numpy as np

    from tutor.coach.tasks import load_task

    spec = load_task(task)
    drawn = set()
    for seed in range(20):
        shapes = spec.random_shapes(np.random.default_rng(seed))
        assert len(shapes) == len(spec.data["sim_random"])
        shape = shapes[0]  # the first rule's: past every tile (the others each reach one regime)
        for name, size in zip(spec.data["shape_names"], shape, strict=True):
            assert size >= DRAWN_AT_LEAST[task][name] and size % DRAWN_NEVER_A_MULTIPLE_OF[task], (name, shape)
        drawn.add(shape)
    assert len(drawn) > 10


def test_every_softmax_row_defeats_exp_without_the_max_shift_even_in_float64():
    import numpy as np

    inp = load(KERNELS / "softmax" / "inputs.py", "softmax_inputs_rows")
    (x,) = inp.make_inputs(np.random.default_rng(5), (6, 3001))
    x = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)
        unshifted = e / e.sum(axis=1, keepdims=True)
    assert not np.isfinite(unshifted).all(axis=1).any()
    # Rows 0 and 3: the maximum stands more than 709 above every other entry, in the second half,
    # so a maximum taken over any part of the row before it leaves exp() overflowing too.
    for r in (0, 3):
        top = int(np.argmax(x[r]))
        assert top >= 3001 // 2 and x[r, top] - np.delete(x[r], top).max() > 709.8
    assert (np.abs(x) > 100).sum(axis=1).min() >= 3001 // 16


def test_layernorms_far_rows_defeat_the_one_pass_variance_in_float32():
    """Summed in float32 as the expert's block does (128 threads of 16 elements, a butterfly within
    each warp, then the warps in turn): on the odd rows the one-pass variance moves outputs well past
    the tolerance, while the two-pass one stays well inside it."""
    import numpy as np

    def block_sum(v):
        padded = np.zeros((v.shape[0], 2048), np.float32)
        padded[:, :v.shape[1]] = v
        per_thread = np.zeros((v.shape[0], 128), np.float32)
        for t in range(16):
            per_thread += padded[:, t * 128:(t + 1) * 128]
        warps = per_thread.reshape(v.shape[0], 4, 32)
        for offset in (16, 8, 4, 2, 1):
            warps = warps + warps[:, :, np.arange(32) ^ offset]
        total = np.zeros(v.shape[0], np.float32)
        for w in range(4):
            total += warps[:, w, 0]
        return total

    def layernorm(x, gamma, beta, one_pass):
        n = np.float32(x.shape[1])
        mean = block_sum(x) / n
        if one_pass:
            var = block_sum(x * x) / n - mean * mean
        else:
            var = block_sum((x - mean[:, None]) ** 2) / n
        rstd = (1 / np.sqrt(var.astype(np.float64) + 1e-5)).astype(np.float32)
        return (x - mean[:, None]) * rstd[:, None] * gamma + beta

    inp = load(KERNELS / "layernorm" / "inputs.py", "layernorm_inputs_far")
    ref = load(KERNELS / "layernorm" / "reference.py", "layernorm_reference_far")
    x, gamma, beta = inp.make_inputs(np.random.default_rng(6), (6, 2001))
    expected = ref.reference(*[a.astype(np.float64) for a in (x, gamma, beta)])
    assert np.all(np.abs(x[1::2].mean(axis=1)) > 99)
    worst = {}
    for one_pass in (True, False):
        err = np.abs(layernorm(x, gamma, beta, one_pass) - expected) / (1e-4 + 1e-4 * np.abs(expected))
        worst[one_pass] = np.nan_to_num(err, nan=np.inf).max(axis=1)
    assert worst[True][1::2].max() > 2 and worst[False].max() < 0.5, worst


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
    """On a real GPU: every candidate on every gpu shape, checked, and timed (gpu_timing, median of 5)."""
    import numpy as np
    from numba import cuda

    from tutor.engine.process.gpu_timing import Timer

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
            ms = Timer(cuda).time(lambda: mod.launch(out, *d_inputs), 5)["ms"]
            records.append({"candidate": cand, "shape": shape, "ok": ok, "err_over_tol": rel, "ms": ms})
    return records


@pytest.mark.e2e  # every kernel through Numba to PTX in a process of its own
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
