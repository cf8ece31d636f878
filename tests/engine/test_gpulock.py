"""The GPU queue across real processes: turns in order, counts of those ahead, and no wedging when a
learner's process dies. No GPU is needed: the queue is the lock, not the device."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tutor.engine.gpulock import GpuQueue, QueueCancelled, waiting_text
from tutor.engine.runner import Runner, RunnerError

ROOT = Path(__file__).resolve().parents[2]

# A learner's process: takes its turn, says so, and holds it until told to let go (a line on stdin).
HOLDER = """
import sys
from tutor.engine.gpulock import GpuQueue
with GpuQueue(sys.argv[1], poll_s=0.02).turn(on_wait=lambda n: print("WAITING", n, flush=True)):
    print("HELD", flush=True)
    sys.stdin.readline()
print("RELEASED", flush=True)
"""


class Learner:
    """Another process in the queue, driven line by line."""

    def __init__(self, folder):
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=ROOT)

    def expect(self, word, timeout=20):
        line = ""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if line.startswith(word):
                return line
        raise AssertionError(f"expected {word!r}, last line {line!r}")

    def release(self):
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        self.expect("RELEASED")
        self.proc.wait(timeout=10)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)


def wait_until(condition, timeout=20):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


class Us:
    """This process taking its turn in a thread, recording what it was told while waiting."""

    def __init__(self, queue, cancelled=None):
        self.told, self.got_turn, self.error = [], threading.Event(), None
        self.release = threading.Event()

        def take():
            try:
                with queue.turn(on_wait=self.told.append, cancelled=cancelled):
                    self.got_turn.set()
                    self.release.wait(20)
            except QueueCancelled as e:
                self.error = e

        self.thread = threading.Thread(target=take, daemon=True)
        self.thread.start()


def test_a_run_waits_while_another_learner_holds_the_gpu(tmp_path):
    holder = Learner(tmp_path)
    holder.expect("HELD")
    queue = GpuQueue(tmp_path, poll_s=0.02)
    assert queue.held()
    us = Us(queue)
    wait_until(lambda: us.told == [1])
    time.sleep(0.3)
    assert not us.got_turn.is_set()
    holder.release()
    assert us.got_turn.wait(10)
    assert us.told == [1] and queue.held()  # we hold it now
    us.release.set()
    us.thread.join(10)
    assert not queue.held() and queue.waiting() == 0
    assert not list(tmp_path.glob("*.ticket"))


def test_waiters_are_served_in_order_and_count_who_is_ahead(tmp_path):
    holder = Learner(tmp_path)
    holder.expect("HELD")
    first = Learner(tmp_path)
    first.expect("WAITING 1")  # the holder is ahead of it
    us = Us(GpuQueue(tmp_path, poll_s=0.02))
    wait_until(lambda: us.told[-1:] == [2])  # the holder and the first waiter
    holder.release()
    first.expect("HELD")  # first come, first served
    wait_until(lambda: us.told[-1:] == [1])
    assert not us.got_turn.is_set()
    first.release()
    assert us.got_turn.wait(10)
    assert us.told == [2, 1]
    us.release.set()
    us.thread.join(10)


def test_a_killed_holder_or_waiter_never_wedges_the_queue(tmp_path):
    holder = Learner(tmp_path)
    holder.expect("HELD")
    waiter = Learner(tmp_path)
    waiter.expect("WAITING 1")
    us = Us(GpuQueue(tmp_path, poll_s=0.02))
    wait_until(lambda: us.told[-1:] == [2])
    waiter.kill()  # its ticket stays on disk, unlocked
    wait_until(lambda: us.told[-1:] == [1])
    holder.kill()  # the kernel drops its lock
    assert us.got_turn.wait(10)
    us.release.set()
    us.thread.join(10)
    assert not list(tmp_path.glob("*.ticket"))


def test_a_newer_run_gives_up_the_older_ones_place(tmp_path):
    holder = Learner(tmp_path)
    holder.expect("HELD")
    stop = threading.Event()
    us = Us(GpuQueue(tmp_path, poll_s=0.02), cancelled=stop.is_set)
    wait_until(lambda: us.told == [1])
    stop.set()
    us.thread.join(10)
    assert isinstance(us.error, QueueCancelled) and not us.got_turn.is_set()
    assert GpuQueue(tmp_path).waiting() == 0
    holder.release()


def test_the_waiting_message_wording():
    assert waiting_text(3) == "waiting for GPU (3 ahead)"


def test_the_simulator_never_queues_but_a_gpu_check_waits_its_turn(tmp_path, monkeypatch, catalog):
    monkeypatch.setenv("GPU_TUTOR_GPU_QUEUE", str(tmp_path))
    assert Runner("sim").gpu_queue is None
    assert Runner("gpu").gpu_queue.folder == tmp_path
    assert Runner("gpu", gpu_queue=False).gpu_queue is None
    holder = Learner(tmp_path)
    holder.expect("HELD")
    with Runner("sim") as sim:  # the GPU is held, and the simulator does not care
        assert sim.check("map", catalog.get("map").reference, seed=1).verdict.passed

    told, outcome = [], {}

    def gpu_check():
        try:
            with Runner("gpu") as gpu:
                outcome["result"] = gpu.check("map", catalog.get("map").reference, seed=1, on_wait=told.append)
        except RunnerError as e:  # no GPU on this machine: the child says so once it is our turn
            outcome["error"] = str(e)

    thread = threading.Thread(target=gpu_check, daemon=True)
    thread.start()
    wait_until(lambda: told == [1])
    time.sleep(0.3)
    assert not outcome
    holder.release()
    thread.join(120)
    assert outcome, "the GPU check never ran after the holder let go"


@pytest.mark.skipif(os.name != "posix", reason="the queue needs fcntl")
def test_the_queue_folder_is_shared_by_every_learner(tmp_path):
    folder = tmp_path / "queue"
    with GpuQueue(folder).turn():
        assert oct(folder.stat().st_mode & 0o7777) == oct(0o1777)
        assert (folder / "gpu.lock").stat().st_mode & 0o044 == 0o044  # others may open it to take turns


def test_a_gpu_verification_waits_its_turn_too(tmp_path, monkeypatch):
    from tutor.coach.tasks import load_task
    from tutor.coach.verify import verify

    monkeypatch.setenv("GPU_TUTOR_GPU_QUEUE", str(tmp_path))
    holder = Learner(tmp_path)
    holder.expect("HELD")
    told, outcome = [], {}
    source = load_task("reduce_sum").source("naive")
    thread = threading.Thread(target=lambda: outcome.update(r=verify("reduce_sum", source, "gpu", on_wait=told.append)),
                              daemon=True)
    thread.start()
    wait_until(lambda: told == [1])
    time.sleep(0.3)
    assert not outcome  # still waiting: nothing ran
    holder.release()
    thread.join(180)
    assert "r" in outcome  # it ran once the GPU was free (here, with no GPU, to a verdict that says so)
