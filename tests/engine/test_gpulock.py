"""The GPU queue across real processes: turns in order, counts of those ahead, and no wedging when a
learner's process dies. No GPU is needed: the queue is the lock, not the device."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue

import pytest

from tutor.engine.process import gpulock
from tutor.session import Session
from tutor.engine.process.gpulock import GpuQueue, QueueCancelled, shared_queue, turns_from_env, waiting_text
from tutor.engine.runner import Runner

ROOT = Path(__file__).resolve().parents[2]

# A learner's process: takes its turn, says so, and holds it until told to let go (a line on stdin).
# It counts the turns given after the folder, or one.
HOLDER = """
import sys
from tutor.session import Session
from tutor.engine.process.gpulock import GpuQueue
turns = {"turns": int(sys.argv[2])} if len(sys.argv) > 2 else {}
with GpuQueue(sys.argv[1], poll_s=0.02, **turns).turn(on_wait=lambda n: print("WAITING", n, flush=True)):
    print("HELD", flush=True)
    sys.stdin.readline()
print("RELEASED", flush=True)
"""


class Learner:
    """Another process in the queue, driven line by line."""

    def __init__(self, folder, turns=None):
        counts = [] if turns is None else [str(turns)]
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), *counts], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=ROOT)
        # Lines arrive through a thread, so that a line that never comes fails the test, not hangs it.
        self.lines = Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.proc.stdout], daemon=True).start()

    def expect(self, word, timeout=20):
        line = ""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except Empty:
                break
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
    time.sleep(0.3)  # kept: it checks that nothing happens while the GPU is held, and nothing is an event
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
    session = Session.from_environment()  # as an entry point reads it: the runner reads no environment
    assert Runner("sim", session=session).gpu_queue is None
    assert Runner("gpu", session=session).gpu_queue.folder == tmp_path
    assert Runner("gpu", gpu_queue=False).gpu_queue is None
    holder = Learner(tmp_path)
    holder.expect("HELD")
    with Runner("sim") as sim:  # the GPU is held, and the simulator does not care
        assert sim.check("map", catalog.get("map").reference, seed=1).verdict.passed

    told, outcome = [], {}
    # Numba's simulator stands in for a GPU here: the same runner path takes the same turn, and a
    # warm child keeps its start (numba's import, slow on a loaded machine) out of the wait.
    device = Runner("numba-sim", gpu_queue=GpuQueue(tmp_path), with_simulator=False)
    device.wait_ready()

    def gpu_check():
        with device:
            outcome["result"] = device.check("map", catalog.get("map").reference, seed=1, on_wait=told.append)

    thread = threading.Thread(target=gpu_check, daemon=True)
    thread.start()
    wait_until(lambda: told == [1])
    time.sleep(0.3)  # kept: it checks that nothing happens while the GPU is held, and nothing is an event
    assert not outcome
    holder.release()
    thread.join(120)
    assert outcome and outcome["result"].verdict.passed, "the GPU check never ran after the holder let go"


@pytest.mark.skipif(os.name != "posix", reason="the queue needs fcntl")
def test_the_queue_folder_is_shared_by_every_learner(tmp_path):
    folder = tmp_path / "queue"
    with GpuQueue(folder).turn():
        assert oct(folder.stat().st_mode & 0o7777) == oct(0o1777)
        assert (folder / "gpu.lock").stat().st_mode & 0o044 == 0o044  # others may open it to take turns


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_a_gpu_verification_waits_its_turn_too(tmp_path, monkeypatch):
    from tutor.coach.tasks import load_task
    from tutor.coach.verify import verify

    monkeypatch.setenv("GPU_TUTOR_GPU_QUEUE", str(tmp_path))
    monkeypatch.setenv("GPU_TUTOR_GPU_TURNS", "1")  # as the holder counts (the room's default is 4)
    holder = Learner(tmp_path)
    holder.expect("HELD")
    told, outcome = [], {}
    source = load_task("reduce_sum").source("naive")
    session = Session.from_environment()
    thread = threading.Thread(target=lambda: outcome.update(r=verify("reduce_sum", source, "gpu", on_wait=told.append,
                                                                     session=session)), daemon=True)
    thread.start()
    wait_until(lambda: told == [1])
    time.sleep(0.3)  # kept: it checks that nothing happens while the GPU is held, and nothing is an event
    assert not outcome  # still waiting: nothing ran
    holder.release()
    thread.join(180)
    assert "r" in outcome  # it ran once the GPU was free (here, with no GPU, to a verdict that says so)


# -- several turns at once ----------------------------------------------------------------------------
def test_with_two_turns_two_learners_hold_the_gpu_at_once_and_a_third_waits_one_ahead(tmp_path):
    first, second = Learner(tmp_path, turns=2), Learner(tmp_path, turns=2)
    first.expect("HELD")
    second.expect("HELD")  # the second did not wait for the first
    queue = GpuQueue(tmp_path, turns=2, poll_s=0.02)
    assert queue.holders() == 2 and queue.held()
    assert sorted(p.name for p in tmp_path.glob("gpu.lock*")) == ["gpu.lock", "gpu.lock.1"]
    us = Us(queue)
    wait_until(lambda: us.told == [1])  # one of the two must end before our run starts
    time.sleep(0.3)  # kept: it checks that nothing happens while the GPU is held, and nothing is an event
    assert not us.got_turn.is_set()
    second.release()
    assert us.got_turn.wait(10)
    assert us.told == [1] and queue.holders() == 2
    us.release.set()
    us.thread.join(10)
    first.release()
    assert queue.holders() == 0 and not queue.held() and queue.waiting() == 0


def test_with_two_turns_waiters_are_served_in_ticket_order(tmp_path):
    holders = [Learner(tmp_path, turns=2) for _ in range(2)]
    for holder in holders:
        holder.expect("HELD")
    waiters = []
    for ahead in (1, 2, 3):  # each takes its ticket once the one before it has
        waiters.append(Us(GpuQueue(tmp_path, turns=2, poll_s=0.02)))
        wait_until(lambda: waiters[-1].told[-1:] == [ahead])
    first, second, third = waiters

    holders[0].release()  # one turn frees up: the oldest waiter's, however eager the others are
    assert first.got_turn.wait(10)
    wait_until(lambda: second.told[-1:] == [1] and third.told[-1:] == [2])
    time.sleep(0.3)  # kept: it checks that nothing happens while the GPU is held, and nothing is an event
    assert not second.got_turn.is_set() and not third.got_turn.is_set()

    first.release.set()
    assert second.got_turn.wait(10)
    wait_until(lambda: third.told[-1:] == [1])
    time.sleep(0.3)  # kept: it checks that nothing happens while the GPU is held, and nothing is an event
    assert not third.got_turn.is_set()

    holders[1].release()
    assert third.got_turn.wait(10)
    for waiter in waiters:
        waiter.release.set()
        waiter.thread.join(10)
    assert not list(tmp_path.glob("*.ticket"))


def test_with_two_turns_a_killed_holder_frees_its_turn(tmp_path):
    killed, kept = Learner(tmp_path, turns=2), Learner(tmp_path, turns=2)
    killed.expect("HELD")
    kept.expect("HELD")
    queue = GpuQueue(tmp_path, turns=2, poll_s=0.02)
    us = Us(queue)
    wait_until(lambda: us.told == [1])
    killed.kill()  # no release: the kernel drops its lock
    assert us.got_turn.wait(10)
    assert queue.holders() == 2  # ours and the one still running
    us.release.set()
    us.thread.join(10)
    kept.release()


def test_the_count_ahead_is_the_turns_that_must_end_before_ours(tmp_path):
    holders = [Learner(tmp_path, turns=3) for _ in range(3)]
    for holder in holders:
        holder.expect("HELD")
    waiter = Learner(tmp_path, turns=3)
    waiter.expect("WAITING 1")
    us = Us(GpuQueue(tmp_path, turns=3, poll_s=0.02))
    wait_until(lambda: us.told[-1:] == [2])  # the waiter's turn, then ours: two must end
    holders[0].release()
    waiter.expect("HELD")
    wait_until(lambda: us.told[-1:] == [1])
    holders[1].release()
    assert us.got_turn.wait(10)
    us.release.set()
    us.thread.join(10)
    for learner in (holders[2], waiter):
        learner.release()


def test_processes_that_count_different_turns_never_put_more_than_the_most_on_the_gpu(tmp_path):
    two = Learner(tmp_path, turns=2)
    two.expect("HELD")  # turns go from the last lock file down: gpu.lock is left for a one-turn process
    one = Learner(tmp_path)
    one.expect("HELD")
    us = Us(GpuQueue(tmp_path, turns=2, poll_s=0.02))
    wait_until(lambda: us.told == [1])
    assert GpuQueue(tmp_path, turns=2).holders() == 2 and GpuQueue(tmp_path).holders() == 1
    one.release()
    assert us.got_turn.wait(10)
    us.release.set()
    us.thread.join(10)
    two.release()


def test_one_turn_uses_only_the_lock_file_it_always_had(tmp_path):
    with GpuQueue(tmp_path).turn():
        assert [p.name for p in tmp_path.iterdir()] == ["gpu.lock"]
    assert GpuQueue(tmp_path).turns == 1


@pytest.mark.parametrize("turns", [0, 17, -1, 2.0, True, "2"])
def test_a_queue_refuses_turns_it_cannot_count(tmp_path, turns):
    with pytest.raises(ValueError, match="turns must be a whole number from 1 to 16"):
        GpuQueue(tmp_path, turns=turns)


def _queue():
    """The queue as an entry point makes it: the session read from the environment, then the runner's."""
    session = Session.from_environment()
    return shared_queue(session.gpu_turns, session.gpu_queue, session.turns_notice)


def test_the_turns_come_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_TUTOR_GPU_QUEUE", str(tmp_path))
    monkeypatch.delenv("GPU_TUTOR_GPU_TURNS", raising=False)
    assert _queue().turns == 4 and _queue().notice is None  # the room's default
    monkeypatch.setenv("GPU_TUTOR_GPU_TURNS", " 3 ")
    assert _queue().turns == 3 and Runner("gpu", session=Session.from_environment()).gpu_queue.turns == 3
    assert Runner("gpu").gpu_queue.turns == 4  # below the entry point nothing reads the environment
    monkeypatch.setenv("GPU_TUTOR_GPU_TURNS", "1")
    assert _queue().turns == 1
    assert shared_queue(turns=2).turns == 2  # a caller that knows better
    monkeypatch.setenv("GPU_TUTOR_GPU_TURNS", "16")
    assert _queue().turns == 16


@pytest.mark.parametrize("raw", ["0", "17", "-1", "two", "2.5", "1_0", "２", "99999"])
def test_a_bad_turns_variable_means_one_turn_and_says_why(tmp_path, monkeypatch, capsys, raw):
    monkeypatch.setattr(gpulock, "_said", set())
    monkeypatch.setenv("GPU_TUTOR_GPU_QUEUE", str(tmp_path))
    monkeypatch.setenv("GPU_TUTOR_GPU_TURNS", raw)
    queue = _queue()
    assert queue.turns == 1
    assert queue.notice == (f"GPU_TUTOR_GPU_TURNS={raw!r} is not a whole number from 1 to 16; GPU runs take one "
                            "turn at a time (set it the same for every learner, e.g. GPU_TUTOR_GPU_TURNS=2)")
    assert turns_from_env({"GPU_TUTOR_GPU_TURNS": raw}) == (1, queue.notice)
    _queue()
    said = capsys.readouterr().err  # once per process, not once per run, and safe for any terminal
    assert said == "gpu-tutor: " + queue.notice.encode("ascii", "backslashreplace").decode() + "\n"
