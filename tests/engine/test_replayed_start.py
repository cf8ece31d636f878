"""A later start of `out` answered from the first run's writes (task_child._replayable): each case
of a verification runs twice, from two starts of `out`, and for a kernel that never reads `out`
the second simulation is most of a large shape's time and tells nothing new. These tests hold the
answer to what a real second run gives, on every coaching kernel we have, and attack the rule
from both sides: a kernel or a launch() that would behave otherwise must be run again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tutor.coach.tasks import coaching_tasks, load_task
from tutor.coach.verify import verify
from tutor.engine import task_child

HERE = Path(__file__).resolve().parents[1] / "coach"
STARTS = ["nan", "zeros", 12345]


def _corpus():
    out = []
    for task in coaching_tasks():
        for name in ("naive", "expert"):
            out.append((task.name, name, task.source(name)))
    for folder in ("past_shapes", "slow_candidates"):
        for path in sorted((HERE / folder).rglob("*.py")):
            task = path.parent.name if folder == "slow_candidates" else max(
                (t.name for t in coaching_tasks() if path.stem.startswith(t.name + "_")), key=len)
            out.append((task, path.stem, path.read_text(encoding="utf-8")))
    return out


def _run(task, source, shape, starts):
    t = load_task(task)
    inputs = [np.ascontiguousarray(x) for x in t.module("inputs").make_inputs(np.random.default_rng(7), shape)]
    state = {}
    loaded = task_child.load("sim", state, source)
    assert not loaded["failures"], loaded
    return task_child.run("sim", state, inputs, tuple(t.module("inputs").output_shape(shape)), starts)


@pytest.mark.parametrize("task, name, source", _corpus(), ids=lambda v: v if isinstance(v, str) and "\n" not in v
                         else "")
def test_a_replayed_start_answers_what_running_it_again_gives(task, name, source):
    shape = load_task(task).shapes("sim")[-1]
    answer, arrays = _run(task, source, shape, STARTS)
    for n, start in enumerate(STARTS[1:], 1):
        alone, alone_arrays = _run(task, source, shape, [start])
        assert np.array_equal(arrays[n], alone_arrays[0], equal_nan=True), (task, name, start)
    # the inputs as the runs left them, after the whole case
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(arrays[len(STARTS):], alone_arrays[1:]))
    if (task, name) in (("attention_causal", "naive"), ("softmax", "naive"), ("matmul", "expert")):
        assert answer["replayed"] == 2  # where the time goes at the drawn shapes: not simulated twice


SOFTMAX = load_task("softmax").source("naive")


def _softmax(kernel_body_change=None, launch_change=None):
    source = SOFTMAX
    if kernel_body_change:
        source = source.replace(*kernel_body_change)
    if launch_change:
        source = source.replace(*launch_change)
    assert source != SOFTMAX
    return source


def test_a_kernel_that_reads_out_is_run_again_from_each_start():
    # it reads out after writing it: honest, and still simulated again, since it reads out
    source = _softmax(("            out[r, c] = math.exp(x[r, c] - m) / s\n",
                       "            out[r, c] = math.exp(x[r, c] - m) / s\n            out[r, c] = out[r, c] * 1.0\n"))
    answer, _ = _run("softmax", source, (5, 7), STARTS)
    assert answer["replayed"] == 0
    assert verify("softmax", source).passed


def test_a_kernel_that_skips_its_work_when_out_holds_numbers_still_fails():
    source = _softmax(("    if r < rows:\n", "    if r < rows:\n        if out[r, 0] == out[r, 0]:\n            return\n"))
    answer, arrays = _run("softmax", source, (5, 7), STARTS)
    assert answer["replayed"] == 0
    assert (arrays[1] == 0).all()  # it did nothing from zeros
    verdict = verify("softmax", source)
    assert not verdict.passed and "wrong_output" in verdict.kinds()


def _stateful(body: str) -> str:
    """launch() with a memory across calls: the verifier's static rules refuse `global` (asserted
    below), so only task_child, the second line, is left to see that a later call differs."""
    source = SOFTMAX.replace("TPB = 128\n", "TPB = 128\nCALLS = 0\n").replace(
        "def launch(out, x):\n", "def launch(out, x):\n    global CALLS\n    CALLS += 1\n" + body)
    assert "global CALLS" in source
    verdict = verify("softmax", source)
    assert verdict.kinds() == ["static"] and "keeps state between calls" in verdict.failures[0].message
    return source


def test_a_launch_that_launches_less_on_a_later_call_is_run_again():
    # the first two calls (the plan, the first run) do the work, a later one launches half the rows
    source = _stateful("    half = CALLS > 2\n").replace(
        "    rows = x.shape[0]\n", "    rows = x.shape[0] // 2 if half else x.shape[0]\n")
    answer, arrays = _run("softmax", source, (300, 7), STARTS[:2])
    assert answer["replayed"] == 0
    assert (arrays[1][150:] == 0).all() and np.isfinite(arrays[0]).all() and (arrays[0][150:] != 0).any()


def test_a_launch_that_skips_a_later_call_is_run_again():
    source = _stateful("    if CALLS > 2:\n        return\n")
    answer, arrays = _run("softmax", source, (5, 7), STARTS[:2])
    assert answer["replayed"] == 0
    assert (arrays[1] == 0).all()


def test_a_view_of_out_or_a_scratch_array_is_run_again_and_still_passes():
    view = _softmax(launch_change=("softmax_rows[(rows + TPB - 1) // TPB, TPB](out, x, rows, cols)",
                                   "softmax_rows[(rows + TPB - 1) // TPB, TPB](out[:], x, rows, cols)"))
    answer, _ = _run("softmax", view, (5, 7), STARTS)
    assert answer["replayed"] == 0  # not the array launch() was given: not known to be the same run
    assert verify("softmax", view).passed
    scratch = _softmax(launch_change=("softmax_rows[(rows + TPB - 1) // TPB, TPB](out, x, rows, cols)",
                                      "tmp = cuda.device_array(out.shape, out.dtype)\n"
                                      "    softmax_rows[(rows + TPB - 1) // TPB, TPB](tmp, x, rows, cols)\n"
                                      "    softmax_rows[(rows + TPB - 1) // TPB, TPB](out, x, rows, cols)"))
    answer, _ = _run("softmax", scratch, (5, 7), STARTS)
    assert answer["replayed"] == 0
    assert verify("softmax", scratch).passed


def test_a_kernel_that_writes_its_input_is_run_again():
    source = _softmax(("            out[r, c] = math.exp(x[r, c] - m) / s\n",
                       "            out[r, c] = math.exp(x[r, c] - m) / s\n        x[r, 0] = x[r, 0]\n"))
    answer, _ = _run("softmax", source, (5, 7), STARTS)
    assert answer["replayed"] == 0


def _peeks(read: str, helper: str = "", params: str = "", args: str = "") -> str:
    """softmax's naive kernel, skipping its row when `read` (an expression of row r) finds a number
    in out: a kernel that relies on out's start, by whatever route `read` reads it."""
    source = _softmax(("    if r < rows:\n", f"    if r < rows:\n        if {read}:\n            return\n"))
    if helper:
        source = source.replace("@cuda.jit\ndef softmax_rows", helper + "\n\n@cuda.jit\ndef softmax_rows")
    if params:
        source = source.replace("def softmax_rows(out, x, rows, cols):", f"def softmax_rows(out, x, rows, cols{params}):")
        source = source.replace("(out, x, rows, cols)\n", f"(out, x, rows, cols{args})\n")
    return source


@pytest.mark.parametrize("source", [
    _peeks("peek(out, r)", helper="@cuda.jit(device=True)\ndef peek(a, r):\n    return a[r, 0] == a[r, 0]\n"),
    _peeks("out[r][0] == out[r][0]"),  # through a row view taken in the kernel
    _peeks("cuda.atomic.max(out, (r, 0), -1e30) == 0.0"),  # an atomic that changes nothing
    _peeks("other[r, 0] == other[r, 0]", params=", other", args=", out"),  # out passed twice
], ids=["device_function", "row_view", "atomic_max", "out_twice"])
def test_out_read_by_another_route_is_run_again(source):
    answer, arrays = _run("softmax", source, (5, 7), STARTS[:2])
    assert answer["replayed"] == 0
    alone, alone_arrays = _run("softmax", source, (5, 7), STARTS[1:2])
    assert np.array_equal(arrays[1], alone_arrays[0], equal_nan=True)


@pytest.mark.parametrize("value, replayed", [
    ("x.dtype", 1), ("x.shape", 1), ("None", 1), ("2 ** 63 - 1", 1), ("(x.shape, math.nan)", 1),
    ("math.nan", 1),  # one object: equal to itself
    ("math.inf - math.inf", 0),  # a new NaN at each call: not equal, so run again (and no error)
])
def test_odd_scalars_in_the_plan_compare_without_error(value, replayed):
    source = _softmax(("def softmax_rows(out, x, rows, cols):", "def softmax_rows(out, x, rows, cols, unused):"),
                      ("(out, x, rows, cols)\n", f"(out, x, rows, cols, {value})\n"))
    answer, arrays = _run("softmax", source, (5, 7), STARTS[:2])
    assert not answer["issues"] and answer["replayed"] == replayed
    alone, alone_arrays = _run("softmax", source, (5, 7), STARTS[1:2])
    assert np.array_equal(arrays[1], alone_arrays[0], equal_nan=True)
