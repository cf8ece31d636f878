"""The child process: warm between runs, and nothing a kernel does can hang or kill the caller."""

import threading
import time

import pytest

from tutor.engine.runner import Runner

HEADER = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n"


@pytest.fixture(scope="module")
def runner():
    with Runner("sim", timeout=3.0) as r:
        yield r


def test_child_stays_warm_between_runs(runner, catalog):
    runner.check("map", catalog.get("map").reference, "ref.py")
    pid = runner.pid
    result = runner.check("map", catalog.get("map").reference, "ref.py")
    assert result.verdict.passed
    assert runner.pid == pid


def test_os_exit_in_a_kernel_is_a_runtime_error_and_the_next_run_works(runner, catalog):
    source = HEADER + "    import os\n    os._exit(3)\n"
    # the simulator's child dies; the real compiler, asked beside it (the app and the CLI alike),
    # refuses the import first, and its word is the one root cause
    assert [f.kind for f in runner.check("map", source, "k.py").verdict.failures] == ["compile_error"]
    result = runner.check("map", source, "k.py", compile=False)
    (f,) = result.verdict.failures
    assert f.kind == "runtime_error" and "exited with status 3" in f.message
    assert runner.check("map", catalog.get("map").reference, "ref.py").verdict.passed


def test_endless_loop_is_stopped_in_the_child_with_its_line(runner):
    result = runner.check("map", HEADER + "    while True:\n        pass\n", "k.py", compile=False)
    (f,) = [f for f in result.verdict.failures if f.kind == "timeout"]
    assert f.line in (6, 7) and f.thread == (0,)


def test_a_kernel_that_blocks_our_alarm_is_killed_at_the_hard_limit():
    source = HEADER + ("    import signal\n    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])\n"
                       "    while True:\n        pass\n")
    with Runner("sim", timeout=0.5) as r:
        r.start()
        r.check("map", HEADER + "    pass\n", "warm.py", compile=False)  # warm, so the short hard limit applies
        started = time.monotonic()
        result = r.check("map", source, "k.py", compile=False)
        assert time.monotonic() - started < 15
    assert [f.kind for f in result.verdict.failures] == ["timeout"]


def test_memory_hog_is_a_runtime_error_not_a_dead_parent(runner, catalog):
    result = runner.check("map", HEADER + "    x = bytearray(50 * 1024 ** 3)\n", "k.py", compile=False)
    kinds = [f.kind for f in result.verdict.failures]
    assert kinds == ["runtime_error"] and "MemoryError" in result.verdict.failures[0].message
    assert runner.check("map", catalog.get("map").reference, "ref.py").verdict.passed


def test_sys_exit_at_module_level_is_reported_with_its_line(runner):
    source = "import sys\nsys.exit(0)\n" + HEADER + "    pass\n"
    (f,) = runner.check("map", source, "k.py", compile=False).verdict.failures
    assert f.kind == "runtime_error" and f.line == 2 and "SystemExit" in f.message
    # with the real compiler beside (the app, and the CLI since issue 37), its loading says it first
    (f,) = runner.check("map", source, "k.py").verdict.failures
    assert f.kind == "compile_error" and f.line == 2 and "SystemExit" in f.message


def test_what_a_kernel_prints_is_kept(runner):
    result = runner.check("map", HEADER + "    i = cuda.threadIdx.x\n    print('hello from', i)\n"
                          "    out[i] = a[i] + 10\n", "k.py", compile=False)
    assert "hello from 3" in result.verdict.printed


def test_cancel_from_another_thread_returns_promptly():
    with Runner("sim", timeout=30) as r:
        r.check("map", HEADER + "    pass\n", "warm.py", compile=False)
        threading.Timer(0.5, r.cancel).start()
        started = time.monotonic()
        result = r.check("map", HEADER + "    while True:\n        pass\n", "k.py", compile=False)
        assert time.monotonic() - started < 10
        assert "cancelled" in result.verdict.failures[0].message


def test_unknown_puzzle_is_a_runner_error(runner):
    from tutor.engine.runner import RunnerError

    with pytest.raises(RunnerError, match="unknown puzzle 'nope'"):
        runner.check("nope", HEADER + "    pass\n", "k.py")


def test_the_compiler_check_alone(runner):
    bad = HEADER + "    xs = [1, 2]\n    out[0] = xs[0]\n"
    failure, note = runner.compile("map", bad, "k.py")
    assert note is None and failure.kind == "compile_error" and failure.line == 6
    assert runner.compile("map", HEADER + "    out[0] = a[0]\n", "k.py") == (None, None)
