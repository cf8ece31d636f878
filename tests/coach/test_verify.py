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
    assert {tuple(b["shape"]): b["bytes"] for b in result.global_bytes}[(7,)] == 7 * 4 * 2


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
    from tutor.engine.sandbox import Child

    marker = tmp_path / "ran"
    with Child("tutor.coach.verify_child", ["sim"], memory_mb=4096) as child:
        loaded, _ = child.ask({"op": "load", "source": FORGER.replace("MARKER", repr(str(marker)))}, timeout=120)
        assert loaded["failures"] == []
        x = np.ones(7, dtype=np.float32)
        records, arrays = child.ask({"op": "run", "out_shape": [7], "repeat": 2}, [x], timeout=120)
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


@pytest.mark.parametrize("name", ["reduce_sum", "softmax", "layernorm", "matmul"])
def test_naive_baselines_pass_the_verifier_on_the_simulator(name):
    from tutor.coach.tasks import load_task

    result = verify(name, load_task(name).source("naive"))
    assert result.passed, [f.to_json() for f in result.failures]


# matmul's expert (128x128 tiles, 8x8 per thread) takes ~30 s on our simulator: test_tasks.py checks
# it on Numba's simulator instead, and the GPU tests on a device.
@pytest.mark.parametrize("name", ["reduce_sum", "softmax", "layernorm"])
def test_expert_kernels_pass_the_verifier_on_the_simulator(name):
    from tutor.coach.tasks import load_task

    result = verify(name, load_task(name).source("expert"))
    assert result.passed, [f.to_json() for f in result.failures]


@pytest.mark.parametrize("name", ["reduce_sum", "softmax", "layernorm", "matmul"])
def test_every_baseline_passes_the_static_screen(name):
    from tutor.coach.screen import screen
    from tutor.coach.tasks import load_task

    for kind in ("naive", "expert"):
        assert screen(load_task(name).source(kind)) == []
