"""What a check's children cost the learner's wait (issue 37): the simulator's child never imports
numba (the real compiler runs beside it, in a child of its own, for the app and the CLI alike), a
runner's children end at once when it closes, and a runner shut down from another thread starts no
child behind its owner's back."""

import signal
import threading
import time

from tutor.engine.runner import Runner
from engine_children import engine_children


def _loads_numba(pid: int) -> bool:
    """Whether the process has numba's compiler (llvmlite's native library) in its memory."""
    with open(f"/proc/{pid}/maps") as f:
        return "llvmlite" in f.read()


def test_the_simulators_child_never_imports_numba_and_the_compilers_does(catalog):
    source = catalog.get("map").reference
    wrong = source.replace("a[", "aa[", 1)
    with Runner("sim") as runner:
        assert runner.check("map", source, "map.py").verdict.passed  # as `gpu-tutor check` asks it
        assert [f.kind for f in runner.check("map", wrong, "map.py").verdict.failures][0] == "compile_error"
        assert not _loads_numba(runner.pid)  # its warm-up and its runs: our simulator alone
        assert _loads_numba(runner._compiler.pid)  # the real compiler, beside it


def test_closing_a_runner_ends_its_children_at_once_without_waiting_for_them_to_wind_down(catalog):
    runner = Runner("sim")
    runner.check("map", catalog.get("map").reference, "map.py", on_provisional=lambda result: None)  # as the app
    children = [runner._child.proc, runner._compiler._child.proc]
    runner.close()
    # a warm child's own exit (numba's teardown) took a third of a second each, before the prompt came back
    assert [proc.returncode for proc in children] == [-signal.SIGKILL, -signal.SIGKILL]


def test_a_runner_shut_down_while_it_warms_up_starts_no_child_and_lets_the_waiting_thread_go():
    before = set(engine_children())
    runner = Runner("sim")
    done = threading.Event()

    def warm():
        runner.start()
        runner.wait_ready()
        done.set()

    threading.Thread(target=warm, daemon=True).start()
    deadline = time.monotonic() + 30
    while runner.pid is None and time.monotonic() < deadline:
        time.sleep(0.01)
    runner.shut_down()  # the app's quit, while numba is still being imported
    assert done.wait(10), "the warming thread kept waiting after the shut-down"
    time.sleep(0.3)  # what a thread still in flight would have started by now
    assert runner.is_shut_down and runner.pid is None
    assert set(engine_children()) <= before
