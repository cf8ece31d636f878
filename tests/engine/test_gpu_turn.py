"""A GPU check holds the room's GPU only while its kernels run: the file is loaded and compiled
before the turn is taken, so a learner's compile never makes the room wait, and a file that does
not compile never waits for the room. Numba's simulator stands in for the GPU (the queue is the
lock, not the device); tests/engine/test_gpu.py runs the same path on the H200."""

import threading
import time

import pytest

from tutor.engine.process.gpulock import GpuQueue
from tutor.engine.runner import Runner, RunnerError

HOLD_S = 2.0


@pytest.fixture
def queue(tmp_path):
    return GpuQueue(tmp_path / "queue", poll_s=0.02)


def hold(queue, seconds: float, taken: threading.Event):
    with queue.turn():
        taken.set()
        time.sleep(seconds)


def test_a_file_that_does_not_compile_never_waits_for_the_gpu(queue, catalog):
    taken = threading.Event()
    holder = threading.Thread(target=hold, args=(queue, 30.0, taken), daemon=True)
    holder.start()
    assert taken.wait(10)
    waits = []
    with Runner("numba-sim", gpu_queue=queue, with_simulator=False) as runner:
        started = time.monotonic()
        result = runner.check("map", "def kernel(out, a:\n    pass\n", "broken.py", seed=1,
                              on_wait=waits.append)
        took = time.monotonic() - started
    assert result.verdict.failures and result.verdict.failures[0].kind == "compile_error"
    assert not waits and runner.last_turn["turn"] is False
    assert took < 25, took  # not the holder's 30 s


def test_the_file_is_loaded_before_the_turn_and_the_turn_is_only_the_run(queue, catalog):
    taken = threading.Event()
    holder = threading.Thread(target=hold, args=(queue, HOLD_S, taken), daemon=True)
    with Runner("numba-sim", gpu_queue=queue, with_simulator=False) as runner:
        runner.wait_ready()
        holder.start()
        assert taken.wait(10)
        prepared_when_waiting = []

        def on_wait(n):
            prepared_when_waiting.append(dict(runner.last_turn or {}))

        result = runner.check("map", catalog.get("map").reference, "map.py", seed=1, on_wait=on_wait)
    holder.join()
    assert result.verdict.passed, result.verdict.failures
    assert prepared_when_waiting and "prepare_s" in prepared_when_waiting[0]  # loaded before it queued
    turn = runner.last_turn
    assert turn["turn"] and turn["waited_s"] >= HOLD_S * 0.5
    assert turn["held_s"] < turn["waited_s"]


def test_a_machine_without_a_gpu_says_so_before_queueing(queue, catalog):
    from tutor.engine.loading.compile import nvvm_missing

    import numba.cuda

    if numba.cuda.is_available() or nvvm_missing():
        pytest.skip("this machine has a GPU (or no NVVM): the no-GPU answer is not what it gives")
    taken = threading.Event()
    threading.Thread(target=hold, args=(queue, 30.0, taken), daemon=True).start()
    assert taken.wait(10)
    waits = []
    with Runner("gpu", gpu_queue=queue, with_simulator=False) as runner:
        started = time.monotonic()
        with pytest.raises(RunnerError, match="no CUDA GPU"):
            runner.check("map", catalog.get("map").reference, "map.py", seed=1, on_wait=waits.append)
    assert not waits and time.monotonic() - started < 25
