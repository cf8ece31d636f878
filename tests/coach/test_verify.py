"""The verifier's dynamic checks, on a small task of our own and real candidate modules.

Cheats that pass a static screen must still fail here: stale outputs, partial outputs, writing the
inputs, shape-hardcoding, races that make results vary."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tutor.coach.verify import verify

TASK_TOML = """
title = "Scale"
tolerance = { rtol = 1e-5, atol = 1e-5 }
sim_shapes = [[1], [7], [33], [64]]
gpu_shapes = [[1], [1000003]]
"""
REFERENCE = "def reference(x):\n    return 2.0 * x\n"
INPUTS = ("import numpy as np\n\n\ndef make_inputs(rng, shape):\n"
          "    return (rng.standard_normal(shape).astype(np.float32),)\n\n\n"
          "def output_shape(shape):\n    return tuple(shape)\n")

HEAD = "from numba import cuda\n\nTPB = 32\n\n\n"
HONEST = HEAD + textwrap.dedent("""
    @cuda.jit
    def scale(out, x, n):
        i = cuda.grid(1)
        if i < n:
            out[i] = 2.0 * x[i]


    def launch(out, x):
        n = x.shape[0]
        scale[(n + TPB - 1) // TPB, TPB](out, x, n)
    """)


@pytest.fixture
def task(tmp_path, monkeypatch):
    folder = tmp_path / "scale"
    folder.mkdir()
    (folder / "task.toml").write_text(TASK_TOML)
    (folder / "reference.py").write_text(REFERENCE)
    (folder / "inputs.py").write_text(INPUTS)
    monkeypatch.setenv("GPU_TUTOR_KERNELS", str(tmp_path))
    return "scale"


def kinds(result):
    return {f.kind for f in result.failures}


def test_an_honest_candidate_is_correct_and_its_bytes_are_counted(task):
    result = verify(task, HONEST)
    assert result.passed, [f.to_json() for f in result.failures]
    assert {tuple(b.shape): b.bytes for b in result.measures}[(7,)] == 7 * 4 * 2


def test_a_launch_that_does_nothing_leaves_poisoned_output_and_no_record_of_work(task):
    source = HONEST.replace("    scale[(n + TPB - 1) // TPB, TPB](out, x, n)", "    pass")
    assert source != HONEST
    result = verify(task, source)
    assert kinds(result) == {"not_finite", "runtime_error"}
    assert any("launched no kernel" in f.message for f in result.failures)


def test_partial_output_is_caught(task):
    source = HONEST.replace("scale[(n + TPB - 1) // TPB, TPB]", "scale[1, TPB]")
    assert "not_finite" in kinds(verify(task, source))


def test_writing_the_inputs_is_caught(task):
    source = HONEST.replace("out[i] = 2.0 * x[i]", "x[i] = 2.0 * x[i]\n        out[i] = x[i]")
    assert "input_mutated" in kinds(verify(task, source))


def test_a_shape_hardcoded_kernel_fails_on_other_shapes(task):
    source = HONEST.replace("n = x.shape[0]", "n = 7")
    assert kinds(verify(task, source)) & {"not_finite", "wrong_output"}


def test_a_race_is_rejected_even_when_the_numbers_come_out_right(task):
    source = HEAD + textwrap.dedent("""
        @cuda.jit
        def scale(out, x, n):
            i = cuda.grid(1)
            if i < n:
                out[i] = 2.0 * x[i]
            if i == 0:
                for k in range(n):
                    out[k] = 2.0 * x[k]


        def launch(out, x):
            n = x.shape[0]
            scale[(n + TPB - 1) // TPB, TPB](out, x, n)
        """)
    assert "race" in kinds(verify(task, source))


def test_a_kernel_a_gpu_would_reject_is_rejected_on_the_simulator_too(task):
    # the simulator runs the list happily; the real Numba compiler (no GPU needed) does not
    source = HONEST.replace("        out[i] = 2.0 * x[i]", "        xs = [2.0, 3.0]\n        out[i] = xs[0] * x[i]")
    assert source != HONEST
    result = verify(task, source)
    compile_errors = [f for f in result.failures if f.kind == "compile_error"]
    assert compile_errors and "`scale`" in compile_errors[0].message and "(line" in compile_errors[0].message
    assert not result.passed


# What a GPU refuses only at the sizes it is timed at: the simulator's shapes (64 at most here)
# never ask for it, the GPU's 1,000,003 does. Each passed the simulator's verification before.
GRID_ON_Y = HEAD.replace("TPB = 32", "TPB = 8") + textwrap.dedent("""
    @cuda.jit
    def scale(out, x, n):
        i = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x
        if i < n:
            out[i] = 2.0 * x[i]


    def launch(out, x):
        n = x.shape[0]
        scale[(1, (n + TPB - 1) // TPB), TPB](out, x, n)
    """)
NUMBA_HEAD = "import numba\nfrom numba import cuda\n\nTPB = 32\nITEMS = 40\n\n\n"
ROW_IN_SHARED = NUMBA_HEAD + textwrap.dedent("""
    @cuda.jit
    def scale(out, x, n):
        seen = cuda.shared.array(0, numba.float32)
        i = cuda.grid(1)
        if i < n:
            seen[cuda.threadIdx.x] = x[i]
            out[i] = 2.0 * seen[cuda.threadIdx.x]


    def launch(out, x):
        n = x.shape[0]
        scale[(n + TPB - 1) // TPB, TPB, 0, n * 4](out, x, n)  # far more than a block's TPB floats
    """)
BIG_BLOCKS_AT_SIZE = NUMBA_HEAD + textwrap.dedent("""
    @cuda.jit
    def scale(out, x, n):
        held = cuda.local.array(ITEMS, numba.float32)
        i = cuda.grid(1) * ITEMS
        for j in range(ITEMS):
            held[j] = x[i + j] if i + j < n else numba.float32(0)
        for j in range(ITEMS):
            if i + j < n:
                out[i + j] = 2.0 * held[j]


    def launch(out, x):
        n = x.shape[0]
        tpb = 1024 if n > 100000 else 32  # large blocks only where there is much work
        scale[(n + tpb * ITEMS - 1) // (tpb * ITEMS), tpb](out, x, n)
    """)


@pytest.mark.parametrize("source, says", [
    (GRID_ON_Y, "125001 blocks along y"),
    (ROW_IN_SHARED, "4000012 bytes of dynamic shared"),
], ids=["grid_y", "dynamic_shared"])
def test_a_launch_a_gpu_refuses_only_at_its_own_shapes_fails_on_the_simulator(task, source, says):
    result = verify(task, source)
    assert not result.passed
    refusal = [f for f in result.failures if f.kind == "runtime_error"]
    assert refusal and says in refusal[0].message and "CUDA_ERROR_INVALID_VALUE" in refusal[0].message
    assert refusal[0].config == "the GPU's shape (1000003,)" and refusal[0].line is not None
    assert all(c.passed for c in result.configs)  # every simulator shape was right: only the GPU's refuses it


def test_scratch_a_gpu_holds_but_the_verifying_process_cannot_skips_the_plan_not_the_candidate(task):
    """16 GB of scratch at the GPU's shape fits an H100's 80 GB, not the child's 8 GB: the plan
    there is skipped with a note, and the candidate, right at every simulator shape, passes."""
    source = HONEST.replace("from numba import cuda", "import numpy as np\nfrom numba import cuda").replace(
        "    scale[(n + TPB - 1) // TPB, TPB](out, x, n)",
        "    spare = cuda.device_array(n * 4096, np.float32)  # room for a wider variant\n"
        "    scale[(n + TPB - 1) // TPB, TPB](out, x, n)")
    assert "spare" in source
    result = verify(task, source)
    assert result.passed, result.failures
    assert any("was not planned at the GPU's shape (1000003,)" in note for note in result.notes)


def test_a_shape_passed_whole_as_a_tuple_passes_as_on_a_gpu(task):
    """numba-cuda types x.shape as a UniTuple of int64; the compile check typed it as a float, and
    this honest kernel failed to compile here (a helper's attack on the GPU-shape plan)."""
    source = HONEST.replace("def scale(out, x, n):", "def scale(out, x, shape):").replace(
        "    if i < n:", "    if i < shape[0]:").replace(
        "scale[(n + TPB - 1) // TPB, TPB](out, x, n)", "scale[(n + TPB - 1) // TPB, TPB](out, x, x.shape)")
    assert "x.shape)" in source
    assert verify(task, source).passed


def test_a_block_of_more_than_64_threads_along_z_is_refused_as_on_a_gpu(task):
    source = HONEST.replace("i = cuda.grid(1)", "i = cuda.blockIdx.x * 65 + cuda.threadIdx.z").replace(
        "scale[(n + TPB - 1) // TPB, TPB](out, x, n)", "scale[(n + 64) // 65, (1, 1, 65)](out, x, n)")
    result = verify(task, source)
    assert not result.passed and "64 threads along z" in result.failures[0].message
    assert verify(task, source.replace("65", "64")).passed


def test_a_block_too_big_for_its_registers_only_at_the_gpus_shape_fails_on_the_simulator(task):
    result = verify(task, BIG_BLOCKS_AT_SIZE)
    refusal = [f for f in result.failures if f.kind == "runtime_error"]
    assert refusal and refusal[0].message.startswith("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"), result.failures
    assert "1024 threads" in refusal[0].message and refusal[0].config == "the GPU's shape (1000003,)"
    # from the honest side: the same kernel with blocks its registers fit passes, GPU shape and all
    assert verify(task, BIG_BLOCKS_AT_SIZE.replace("tpb = 1024 if", "tpb = 256 if")).passed


@pytest.mark.e2e  # a whole attention verification (20 s here)
def test_attention_with_a_heads_keys_in_shared_memory_fails_at_the_gpus_shape():
    from pathlib import Path

    source = (Path(__file__).parent / "gpu_shapes" / "attention_keys_in_shared.py").read_text()
    result = verify("attention", source)
    assert [(f.kind, f.config) for f in result.failures] == [("runtime_error", "the GPU's shape (1, 2, 257, 128)")]
    assert "131584 bytes of dynamic shared memory" in result.failures[0].message
    assert result.failures[0].line == source.splitlines().index(
        "    attention_keys_shared[(nb * nh, (s + TPB - 1) // TPB), TPB, 0, s * d * 4](out, q, k, v, nh, s, d)") + 1
    assert result.configs and all(c.passed for c in result.configs)


def test_a_candidate_that_does_not_parse_is_rejected_before_anything_runs(task):
    result = verify(task, "def launch(out, x):\n    return (\n")
    assert kinds(result) == {"static"} and result.failures[0].rule == "syntax"


# Escaped today's main (42f2d21): through `gpu-tutor verify softmax forge.py --backend sim` this
# kernel printed "softmax on sim: CORRECT" (exit 0) with no kernel work at all: on the simulator the
# kernel body ran as plain Python, reached `os` through a generator's frame, wrote a verdict to the
# child's stdout (then the answer channel) and left with os._exit(0).
FORGER = HEAD + textwrap.dedent("""
    @cuda.jit
    def scale(out, x, n):
        g = (k for k in range(1))
        o = g.gi_frame.f_builtins["__import__"]("os")
        o.close(o.open(MARKER, 64 | 1))
        o.write(1, b'{"task": "scale", "backend": "sim", "correct": true, "failures": [], "flags": []}\\n')
        o._exit(0)


    def launch(out, x):
        n = x.shape[0]
        scale[(n + TPB - 1) // TPB, TPB](out, x, n)
    """)


def test_a_kernel_that_forges_the_verdict_is_rejected_before_it_runs(task, tmp_path):
    marker = tmp_path / "ran"
    result = verify(task, FORGER.replace("MARKER", repr(str(marker))))
    assert not result.passed and kinds(result) == {"static"}
    assert not marker.exists()


def test_past_the_screen_the_real_compiler_still_stops_the_forger_before_any_of_it_runs(task, tmp_path):
    """Defence in depth: the verifier's child itself, sent the forger directly (as if the screen had
    let it through), compiles every planned launch first and runs nothing Numba refuses."""
    from tutor.engine.process.sandbox import Child

    marker = tmp_path / "ran"
    with Child("tutor.engine.child", ["sim"], memory_mb=4096) as child:
        loaded, _ = child.ask({"op": "task_load", "source": FORGER.replace("MARKER", repr(str(marker)))}, timeout=120)
        assert [f["line"] for f in loaded["failures"]] == [13]  # building it already refuses `o._exit`
    # without the private name the builder refuses, the compiler is what stops it
    forger = FORGER.replace("o._exit(0)", "o.kill(o.getpid(), 9)").replace("MARKER", repr(str(marker)))
    with Child("tutor.engine.child", ["sim"], memory_mb=4096) as child:
        loaded, _ = child.ask({"op": "task_load", "source": forger}, timeout=120)
        assert loaded["failures"] == []
        x = np.ones(7, dtype=np.float32)
        records, arrays = child.ask({"op": "task_run", "out_shape": [7], "repeat": 2}, [x], timeout=120)
    assert records["ran"] is False and arrays == []
    assert [i["kind"] for i in records["issues"]] == ["compile_error"]
    assert "yield" in records["issues"][0]["message"]
    assert not marker.exists()


def test_verify_cli_rejects_a_host_side_cheat_statically(tmp_path, task):
    cheat = tmp_path / "cheat.py"
    cheat.write_text("from numba import cuda\nimport numpy as np\n\n\ndef launch(out, x):\n"
                     "    out.copy_to_device(np.array(2 * x.copy_to_host(), dtype=np.float32))\n")
    proc = subprocess.run([sys.executable, "-m", "tutor.cli", "verify", task, str(cheat), "--json"],
                          capture_output=True, text=True, timeout=120)
    result = json.loads(proc.stdout)
    assert proc.returncode == 1 and not result["passed"]
    assert {f["rule"] for f in result["failures"]} >= {"host-copy", "host-numpy"}
    assert all(f["line"] == 6 for f in result["failures"])


def test_verify_cli_accepts_an_honest_candidate_in_a_fresh_process(tmp_path, task):
    good = tmp_path / "good.py"
    good.write_text(HONEST)
    proc = subprocess.run([sys.executable, "-m", "tutor.cli", "verify", task, str(good)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "scale on sim: PASSED" in proc.stdout


def test_verify_cli_unknown_task_is_a_usage_error(tmp_path):
    good = tmp_path / "good.py"
    good.write_text(HONEST)
    proc = subprocess.run([sys.executable, "-m", "tutor.cli", "verify", "nope", str(good)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown task 'nope'" in proc.stderr


# -- The simulator's drawn shape: past every tile and window, new at every verification -----------
DRAWN_TOML = TASK_TOML + 'shape_names = ["n"]\n\n[[sim_random]]\nn = [1025, 4095]\nnot_multiple_of = 2\n'


def test_every_verification_draws_a_new_shape_after_the_fixed_ones_and_names_it(task, tmp_path):
    (tmp_path / task / "task.toml").write_text(DRAWN_TOML)
    drawn = []
    for _ in range(3):
        result = verify(task, HONEST)
        assert result.passed, [f.to_json() for f in result.failures]
        names = [c.name for c in result.configs]
        assert names[:-1] == ["shape (1,)", "shape (7,)", "shape (33,)", "shape (64,)"]
        (n,) = (int(v) for v in names[-1].removeprefix("shape (").removesuffix(",)").split(","))
        assert 1025 <= n <= 4095 and n % 2 == 1 and names[-1] == f"shape ({n},)"
        drawn.append(n)
    assert len(set(drawn)) > 1, drawn


def test_a_kernel_right_only_for_small_sizes_fails_on_the_drawn_shape_and_the_verdict_names_it(task, tmp_path):
    (tmp_path / task / "task.toml").write_text(DRAWN_TOML)
    source = _changed(HONEST, "scale[(n + TPB - 1) // TPB, TPB](out, x, n)",
                      "scale[(min(n, 1024) + TPB - 1) // TPB, TPB](out, x, n)")
    result = verify(task, source)
    assert [c.passed for c in result.configs] == [True, True, True, True, False]
    assert {f.config for f in result.failures} == {result.configs[-1].name}
    assert result.configs[-1].name in result.failures[0].message


def test_a_drawing_rule_that_does_not_name_the_shape_is_an_error(task, tmp_path):
    from tutor.coach.tasks import load_task

    (tmp_path / task / "task.toml").write_text(DRAWN_TOML.replace("\nn = [1025, 4095]", "\nm = [1025, 4095]"))
    with pytest.raises(ValueError, match=r"range for each of shape_names \['n'\], got \['m'\]"):
        load_task(task).random_shapes(np.random.default_rng(0))
    (tmp_path / task / "task.toml").write_text(DRAWN_TOML.replace("[1025, 4095]", "[16, 16]").replace("= 2", "= 16"))
    with pytest.raises(ValueError, match=r"n = \[16, 16\] leaves no size to draw"):
        load_task(task).random_shapes(np.random.default_rng(0))


def _shape_of(config) -> tuple:
    return tuple(int(n) for n in config.name.removeprefix("shape (").rstrip(")").split(",") if n.strip())


def _fixed(result, task: str) -> list:
    """The configs of a task's fixed simulator shapes (the small ones every kernel passes)."""
    from tutor.coach.tasks import load_task

    fixed = set(load_task(task).shapes("sim"))
    return [c for c in result.configs if _shape_of(c) in fixed]


def _drawn_failed(result, task: str) -> bool:
    """Some config past the fixed and scored shapes (a drawn one) failed."""
    from tutor.coach.tasks import load_task

    known = set(load_task(task).shapes("sim")) | {load_task(task).scored_shape()}
    return any(not c.passed for c in result.configs if _shape_of(c) not in known)


# Each of these kernels was judged correct before the drawn shapes and the inputs past 100: the
# fixed shapes are all smaller than 65 and the softmax inputs stayed below exp's overflow.
def test_a_softmax_without_the_max_shift_fails_on_the_simulator():
    from tutor.coach.tasks import load_task

    source = _changed(load_task("softmax").source("naive"), "math.exp(x[r, c] - m)", "math.exp(x[r, c])")
    result = verify("softmax", source)
    assert not result.passed
    assert kinds(result) & {"runtime_error", "not_finite"}, [f.to_json() for f in result.failures]


@pytest.mark.parametrize("old, new", [
    ("for c in range(1, cols):", "for c in range(1, min(cols, 64)):"),  # the max of 64 columns only
    ("softmax_rows[(rows + TPB - 1) // TPB, TPB](out, x, rows, cols)",  # one tile of 64 columns
     "softmax_rows[(rows + TPB - 1) // TPB, TPB](out, x, rows, min(cols, 64))"),
], ids=["max_of_64_columns", "tile_of_64_columns"])
def test_a_softmax_right_only_up_to_64_columns_fails_on_the_drawn_shape(old, new):
    from tutor.coach.tasks import load_task

    result = verify("softmax", _changed(load_task("softmax").source("naive"), old, new))
    assert not result.passed and all(_shape_of(c)[1] > 64 for c in result.configs if not c.passed)
    assert all(c.passed for c in _fixed(result, "softmax")), [f.to_json() for f in result.failures]


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_a_matmul_that_stops_after_a_64_tile_of_k_fails_on_the_drawn_shape():
    from tutor.coach.tasks import load_task

    result = verify("matmul", _changed(load_task("matmul").source("naive"), "range(k)", "range(min(k, 64))"))
    assert kinds(result) == {"wrong_output"} and _drawn_failed(result, "matmul")
    assert all(c.passed for c in _fixed(result, "matmul"))


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
@pytest.mark.parametrize("kernel, launch, one_tile", [
    # the former expert: its block tile is 128 x 128, and the drawn shapes (up to 300) pass it
    ("steps/3_register_tiles", "grid = ((n + BN - 1) // BN, (m + BM - 1) // BM)", "grid = (1, 1)"),
    # today's expert runs its 64 x 64 kernel wherever fewer 128 tiles than SMs would launch: on
    # every simulator shape, so a one-tile grid in the 128 path alone would change nothing
    ("expert", "matmul_small[((n + SBM - 1) // SBM, (m + SBM - 1) // SBM), NT]", "matmul_small[(1, 1), NT]"),
])
def test_a_tiled_matmul_that_launches_one_tile_fails_on_the_drawn_shape(kernel, launch, one_tile):
    """Before the drawn shapes, every fixed shape (m, n <= 64) fit in one tile."""
    from tutor.coach.tasks import load_task

    result = verify("matmul", _changed(load_task("matmul").source(kernel), launch, one_tile))
    assert kinds(result) == {"not_finite"} and _drawn_failed(result, "matmul")
    assert all(c.passed for c in _fixed(result, "matmul"))


def test_a_reduce_sum_that_covers_only_4096_elements_fails_on_the_drawn_shape():
    from tutor.coach.tasks import load_task

    source = _changed(load_task("reduce_sum").source("naive"), "add_all[(n + TPB - 1) // TPB, TPB]",
                      "add_all[min(16, (n + TPB - 1) // TPB), TPB]")
    result = verify("reduce_sum", source)
    assert kinds(result) == {"wrong_output"} and _drawn_failed(result, "reduce_sum")
    assert all(c.passed for c in _fixed(result, "reduce_sum"))


# On the simulator every value in flight is a float64, so a variance that cancels in float32 and an
# exp() past float32's range (88.7) pass there: only a GPU, where they are float32, fails these.
def _one_pass_layernorm() -> str:
    """The expert with E[x^2] - mean^2 for the variance: the rows far from zero lose its digits."""
    from tutor.coach.tasks import load_task

    source = _changed(load_task("layernorm").source("expert"), "dv = xr[t] - mean\n        s2 += dv * dv",
                      "s2 += xr[t] * xr[t]")
    source = _changed(source, "dv = x[r, c] - mean\n        s2 += dv * dv", "s2 += x[r, c] * x[r, c]")
    return _changed(source, "var = _block_sum(s2, red, tid, nt) * inv_n",
                    "var = _block_sum(s2, red, tid, nt) * inv_n - mean * mean")


def _attention_without_the_max_shift() -> str:
    from tutor.coach.tasks import load_task

    return _changed(load_task("attention_causal").source("naive"), "p = math.exp(sc - m)", "p = math.exp(sc)")


@pytest.mark.gpu
@pytest.mark.parametrize("name, make", [("layernorm", _one_pass_layernorm),
                                        ("attention_causal", _attention_without_the_max_shift)],
                         ids=["layernorm_one_pass_variance", "attention_without_max_shift"])
def test_float32_cancellation_and_overflow_fail_on_a_gpu(name, make):
    result = verify(name, make(), "gpu")
    assert not result.passed
    gpu_failures = [f for f in result.failures if not (f.config or "").startswith("simulator")]
    assert {f.kind for f in gpu_failures} & {"wrong_output", "not_finite"}, [f.to_json() for f in result.failures]


def _changed(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new)


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
@pytest.mark.parametrize("name", ["reduce_sum", "softmax", "layernorm", "matmul"])
def test_naive_baselines_pass_the_verifier_on_the_simulator(name):
    from tutor.coach.tasks import load_task

    result = verify(name, load_task(name).source("naive"))
    assert result.passed, [f.to_json() for f in result.failures]


# matmul's expert (128x128 tiles, 8x8 per thread) takes ~30 s on our simulator: test_tasks.py checks
# it on Numba's simulator instead, and the GPU tests on a device.
@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
@pytest.mark.parametrize("name", ["reduce_sum", "softmax", "layernorm"])
def test_expert_kernels_pass_the_verifier_on_the_simulator(name):
    from tutor.coach.tasks import load_task

    result = verify(name, load_task(name).source("expert"))
    assert result.passed, [f.to_json() for f in result.failures]


@pytest.mark.parametrize("name", ["reduce_sum", "softmax", "layernorm", "matmul"])
def test_every_baseline_passes_the_static_screen(name):
    from tutor.engine.loading.static_rules import check_task_module
    from tutor.coach.tasks import load_task

    for kind in ("naive", "expert"):
        assert check_task_module(load_task(name).source(kind)) == []


# Dynamic shared memory: the shared array is sized at launch, kern[grid, block, 0, nbytes](...).
DYNAMIC_SHARED_REDUCE_SUM = textwrap.dedent('''
    import numba
    from numba import cuda

    TPB = 128


    @cuda.jit
    def zero(out):
        if cuda.grid(1) == 0:
            out[0] = 0.0


    @cuda.jit
    def block_sums(out, x, n):
        cache = cuda.shared.array(0, numba.float32)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        cache[t] = x[i] if i < n else numba.float32(0)
        cuda.syncthreads()
        s = cuda.blockDim.x // 2
        while s > 0:
            if t < s:
                cache[t] += cache[t + s]
            cuda.syncthreads()
            s //= 2
        if t == 0:
            cuda.atomic.add(out, 0, cache[0])


    def launch(out, x):
        n = x.shape[0]
        zero[1, 1](out)
        block_sums[(n + TPB - 1) // TPB, TPB, 0, TPB * 4](out, x, n)
    ''')


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_a_reduction_with_dynamic_shared_memory_passes_the_verifier_on_the_simulator():
    result = verify("reduce_sum", DYNAMIC_SHARED_REDUCE_SUM, "sim")
    assert result.passed, [f.to_json() for f in result.failures]


def test_the_real_compiler_accepts_a_dynamic_shared_array():
    from tutor.engine.loading.compile import compile_launches, nvvm_missing

    if nvvm_missing():
        pytest.skip(nvvm_missing())
    launches = [("zero", (("array", "float32", 1),)),
                ("block_sums", (("array", "float32", 1), ("array", "float32", 1), ("int",)))]
    assert compile_launches(DYNAMIC_SHARED_REDUCE_SUM, "candidate.py", launches) == []


def test_a_record_of_fewer_bytes_than_the_floor_is_implausible_not_scored():
    """The floor is every input read once and the output written once: a launch that moved fewer
    bytes than that cannot have computed a right answer, however the answer got there (host maths
    with numpy arrays passed for device arrays moved 8 bytes for a 20,011-element sum)."""
    from tutor.coach.tasks import load_task
    from tutor.coach.verify import _Judge

    task = load_task("reduce_sum")
    floor = task.floor_bytes((20011,))
    judge = _Judge(task, "", "sim", 0.0, 1.0)
    (failure,) = judge.plausible({"launches": 1, "moved": 8}, floor, "shape (20011,)")
    assert failure.kind == "implausible" and f"{floor:,} bytes" in failure.message and floor == 20011 * 4 + 4
    assert judge.plausible({"launches": 1, "moved": floor}, floor, "shape (20011,)") == []
    (forged,) = judge.plausible({"launches": 1, "moved": "8"}, floor, "shape (20011,)")
    assert forged.kind == "implausible" and "malformed" in forged.message
