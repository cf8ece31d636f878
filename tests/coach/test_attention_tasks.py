"""Attention coaching tasks under kernels/attention*/: every folder is complete and parses, its
naive and expert candidates pass the static screen and the verifier on our simulator, and every
kernel compiles for sm_90 without a GPU.

The sm_90 compile runs in a subprocess (this file run as a script with --ptx) so the test process
keeps its own numba configuration, as in test_tasks.py.
"""

import json
import os
import subprocess
import sys
import tomllib

import pytest

from tutor.engine.loading.static_rules import check_task_module
from tutor.coach.tasks import load_task
from tutor.coach.verify import verify
from task_kernels import KERNELS, compile_for_sm90, load

TASKS = ["attention", "attention_causal", "attention_document", "attention_alibi"]
FILES = ["task.toml", "reference.py", "inputs.py", "naive.py", "expert.py"]
CANDIDATES = ["naive", "expert"]


@pytest.mark.parametrize("task", TASKS)
def test_task_folder_is_complete_and_parses(task):
    import numpy as np

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
    assert [4, 8, 1024, 64] in meta["gpu_shapes"]
    ref = load(folder / "reference.py", f"{task}_reference_p")
    inp = load(folder / "inputs.py", f"{task}_inputs_p")
    assert callable(ref.reference) and callable(inp.make_inputs) and callable(inp.output_shape)
    for name in CANDIDATES:
        source = (folder / f"{name}.py").read_text()
        compile(source, f"{task}/{name}.py", "exec")
        assert source.count("\ndef launch(out,") == 1
    dtypes = [np.dtype(i.get("dtype", "float32")) for i in meta["inputs"]]
    for shape in meta["sim_shapes"] + meta["gpu_shapes"][:2]:
        arrays = inp.make_inputs(np.random.default_rng(0), tuple(shape))
        assert len(arrays) == len(meta["inputs"])
        assert [a.dtype for a in arrays] == dtypes and all(a.flags.c_contiguous for a in arrays)
        # The verifier hands the reference float64 copies of every input (doc included).
        expected = ref.reference(*[a.astype(np.float64) for a in arrays])
        assert expected.shape == tuple(inp.output_shape(tuple(shape)))
        assert np.isfinite(expected).all()


def test_masks_reduce_to_the_plain_task_where_they_allow_everything():
    """Row 0 of causal attention sees only key 0; a single document makes document = causal."""
    import numpy as np

    shape = (2, 3, 6, 4)
    q, k, v = load(KERNELS / "attention" / "inputs.py", "att_in").make_inputs(
        np.random.default_rng(1), shape)
    causal = load(KERNELS / "attention_causal" / "reference.py", "att_c").reference(q, k, v)
    assert np.allclose(causal[:, :, 0], v[:, :, 0])
    one_doc = np.zeros((2, 6))
    document = load(KERNELS / "attention_document" / "reference.py", "att_d").reference(q, k, v, one_doc)
    assert np.allclose(document, causal)
    full = load(KERNELS / "attention" / "reference.py", "att_f").reference(q, k, v)
    assert np.allclose(full[:, :, -1], causal[:, :, -1])


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("cand", CANDIDATES)
def test_candidate_passes_the_static_screen(task, cand):
    findings = check_task_module((KERNELS / task / f"{cand}.py").read_text())
    assert findings == [], [str(f) for f in findings]


@pytest.mark.e2e  # a whole verification of each attention kernel: 8 to 18 s each
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("cand", CANDIDATES)
def test_candidate_passes_the_verifier_on_our_simulator(task, cand):
    result = verify(task, (KERNELS / task / f"{cand}.py").read_text())
    assert result.passed, [f.to_json() for f in result.failures]


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_a_causal_alibi_kernel_that_sees_only_the_last_16_keys_fails_past_the_fixed_shapes():
    """Judged correct before the drawn shapes: every fixed shape has S <= 9, inside the window. The
    scored shape (S = 97) and every drawn one (S >= 17) reach past it."""
    naive = (KERNELS / "attention_alibi" / "naive.py").read_text()
    assert naive.count("for j in range(qi + 1):") == 2
    source = naive.replace("for j in range(qi + 1):", "for j in range(max(0, qi - 15), qi + 1):")
    result = verify("attention_alibi", source)
    assert {f.kind for f in result.failures} == {"wrong_output"}
    past = 1 + len(load_task("attention_alibi").data["sim_random"])  # the scored shape and the drawn ones
    assert all(c.passed for c in result.configs[:-past])
    assert [c.passed for c in result.configs[-past:]] == [False] * past
    shapes = [c.name for c in result.configs[-past:]]
    assert all(any(shape in f.message for shape in shapes) for f in result.failures)


@pytest.mark.parametrize("task", TASKS)
def test_the_drawn_shape_is_past_two_64_tiles_and_a_warp_of_head_dimensions(task):
    import numpy as np

    spec = load_task(task)
    for seed in range(20):
        B, H, S, D = shape = spec.random_shapes(np.random.default_rng(seed))[0]
        assert S >= 160 and D > 32 and S % 16 and D % 16, shape


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_a_tiled_kernel_missing_the_barrier_between_tiles_races_on_the_drawn_shape():
    """The fixed shapes (S <= 9, D <= 8) fill one tile of keys and one chunk of dimensions, so the
    barrier that guards the next chunk's loads is never needed there: only the drawn shape, with
    three tiles of keys and three chunks, sees the race."""
    expert = (KERNELS / "attention" / "expert.py").read_text()
    guard = "            cuda.syncthreads()  # everyone is done with the previous chunk\n"
    assert expert.count(guard) == 1
    result = verify("attention", expert.replace(guard, ""))
    assert "race" in {f.kind for f in result.failures}, [f.to_json() for f in result.failures]
    drawn = len(load_task("attention").data["sim_random"])
    past_two_tiles = result.configs[-drawn]  # the first rule's shape
    assert all(c.passed for c in result.configs[:-drawn - 1]) and past_two_tiles.passed is False


@pytest.mark.parametrize("task", TASKS)
def test_one_query_row_in_four_has_raw_scores_past_float32_exps_range(task):
    """Those rows' raw scores all lie about 95 to 130 from zero: without the max shift, exp() of
    them overflows float32 (or underflows to 0 / 0), while the softmax itself stays moderate."""
    import numpy as np

    q, k = load(KERNELS / task / "inputs.py", f"{task}_in_scores").make_inputs(
        np.random.default_rng(3), (2, 2, 67, 24))[:2]
    scores = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float64), k.astype(np.float64)) / np.sqrt(24)
    hot = scores[:, :, 1::4]
    assert (np.abs(hot) > 88.8).mean() > 0.99
    assert (np.abs(hot).min(axis=-1) > 80).all() and (np.abs(hot).max(axis=-1) < 150).all()
    assert np.all(hot.max(axis=-1) - hot.min(axis=-1) < 40)  # a softmax of some spread, not one-hot
    spread = hot.max(axis=-1) - np.sort(hot, axis=-1)[..., -2]
    assert np.median(spread) < 5


# Kernel signatures as the launch functions call them (C-contiguous arrays, int64 sizes).
def _signatures():
    import numba

    f4, i2, i64 = numba.float32[:, :, :, ::1], numba.int32[:, ::1], numba.int64
    plain = (f4, f4, f4, f4, i64, i64, i64, i64)
    doc = (f4, f4, f4, f4, i2, i64, i64, i64, i64)
    return {
        task: {"naive": {"attention_rows": doc if task == "attention_document" else plain},
               "expert": {"attention_flash": doc if task == "attention_document" else plain}}
        for task in TASKS
    }


def _compile_task_for_sm90(task: str) -> list[dict]:
    """Without the simulator or a GPU: compile every kernel to PTX for compute capability 9.0."""
    return compile_for_sm90(task, _signatures()[task])


@pytest.mark.e2e  # every kernel through Numba to PTX in a process of its own
@pytest.mark.parametrize("task", TASKS)
def test_kernels_compile_for_sm90_without_a_gpu(task):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run([sys.executable, __file__, "--ptx", task], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    records = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(records) == sum(len(k) for k in _signatures()[task].values())
    # The expert's per-thread q row and accumulator are register arrays: no local memory.
    assert all(r["local_memory_ops"] == 0 for r in records if r["candidate"] == "expert"), records


if __name__ == "__main__":
    if sys.argv[1] == "--ptx":
        print(json.dumps(_compile_task_for_sm90(sys.argv[2])))


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_the_scored_shape_is_the_same_work_at_every_verification():
    """attention_document's work depends on where documents end: with fresh inputs at the scored
    shape the naive kernel scored 1.07x against itself. Its scored inputs are fixed, so the
    baseline and every candidate are measured on the same documents."""
    naive = (KERNELS / "attention_document" / "naive.py").read_text()
    first, second = (verify("attention_document", naive) for _ in range(2))
    assert first.passed and second.passed
    (a,), (b,) = ([r.to_json() for r in v.measures if r.scored] for v in (first, second))
    assert a["shape"] == b["shape"] == [1, 1, 97, 24] and a["bytes"] == b["bytes"]
