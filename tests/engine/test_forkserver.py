"""Nothing one untrusted check does is seen by the next: each runs in a fresh child forked from a
warm server, and the child and its folder are gone when the verdict is in. Its answer and its folder
have caps from what the parent knows.

The probe child (sandbox_probe.py) runs whatever Python it is sent: the worst a check could do if
every other defence failed. Each test starts from what a warm child (today's main for every check)
keeps or takes: a patched module, files in its folder, an answer of any size."""

from __future__ import annotations

import os
import resource
import time

import pytest

from tutor.engine.process import wire
from tutor.engine.process.forkserver import ForkServer
from tutor.engine.runner import Runner, answer_limits
from tutor.session import Session, Trust

SERVED = Session(trust=Trust.SERVED)  # a served room's learner: what `gpu-tutor serve` sets up
from tutor.engine.process.sandbox import Child, ChildDied
from waiting import until_true

PATCH = ("import tutor.engine.judge as check\n"
         "check.judge = lambda *a, **k: 'patched'\n"
         "open('left-behind.txt', 'w').write('x' * 1000)\n"
         "result = 'patched'\n")
LOOK = ("import os, tutor.engine.judge as check\n"
        "result = [getattr(check.judge, '__name__', 'patched'), os.path.exists('left-behind.txt'), os.getpid()]\n")


@pytest.fixture(scope="module")
def server():
    with ForkServer("tests.engine.sandbox_probe", memory_mb=2048) as s:
        s.wait_ready()
        yield s


def ask(child, code: str, **kwargs):
    return child.ask({"code": code}, timeout=30, **kwargs)[0]


def test_a_warm_child_keeps_what_a_check_patched_and_left_in_its_folder():
    """The case a fresh process closes: one process for every check, as the warm child is."""
    with Child("tests.engine.sandbox_probe", memory_mb=1024) as warm:
        assert ask(warm, PATCH) == "patched"
        name, left, _ = ask(warm, LOOK)
    assert name == "<lambda>" and left


def test_each_check_is_a_fresh_process_that_sees_nothing_the_last_one_did(server):
    first = server.fork()
    assert ask(first, PATCH) == "patched"
    folder, pid = first.folder, first.proc.pid
    first.kill()
    assert not os.path.exists(folder)  # its folder is gone with it
    second = server.fork()
    try:
        name, left, second_pid = ask(second, LOOK)
    finally:
        second.kill()
    assert name == "judge" and not left and second_pid != pid


def test_a_forked_child_is_confined_before_it_reads_its_request(server):
    child = server.fork()
    try:
        said = ask(child, "import os, socket\nresults = []\n"
                          "for attempt in (lambda: os.fork(), lambda: socket.socket(socket.AF_INET),\n"
                          "                lambda: open('/etc/hostname').read() and open(os.path.expanduser('~/../x'), 'w')):\n"
                          "    try:\n        attempt(); results.append('done')\n"
                          "    except OSError as e:\n        results.append(type(e).__name__)\n"
                          "result = [results, os.getsid(0) == os.getpid(), os.getcwd()]\n")
    finally:
        child.kill()
    refused, own_session, cwd = said
    assert refused[0] == "PermissionError" and refused[1] in ("PermissionError", "OSError")
    assert refused[2] in ("PermissionError", "OSError")  # nothing written outside its folder
    assert own_session and cwd.startswith("/") and "gpu-tutor-check-" in cwd


def test_nothing_of_a_check_is_left_running_when_it_is_over(server):
    child = server.fork()
    pid = ask(child, "import os\nresult = os.getpid()")
    child.kill()
    until_true(lambda: _ended(pid), timeout=10, what=f"process {pid} to end")


def _ended(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().split()[2] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_a_child_that_dies_says_how(server):
    child = server.fork()
    with pytest.raises(ChildDied) as died:
        ask(child, "import os\nos._exit(3)")
    child.kill()
    assert died.value.code == 3


# -- what a check may send and write --------------------------------------------------------------
def map_limits(catalog):
    from tutor.engine.judge import plan

    planned = plan(catalog.get("map"), seed=1)
    return answer_limits([(p.config, p.inputs) for p in planned], "sim", 20)


FORGED = ("import os, struct\n"
          "header = b'{\"ok\": null}'\n"
          "message = struct.pack('!Q', len(header)) + header + struct.pack('!Q', 2) + struct.pack('!Q', 600 << 20)\n"
          "for fd in range(3, 30):\n"
          "    try:\n        os.write(fd, message)\n"
          "    except OSError:\n        pass\n"
          "chunk = b'\\0' * (1 << 20)\n"
          "for fd in range(3, 30):\n"
          "    try:\n"
          "        for _ in range(600):\n            os.write(fd, chunk)\n"
          "    except OSError:\n        pass\n"
          "import time; time.sleep(30)\n")


def test_an_answer_larger_than_the_outputs_asked_for_is_refused_unread(server, catalog):
    """A forged answer of 600 MB arrays grew the learner's app by gigabytes: now its length is
    enough to refuse it, and the parent's memory does not move."""
    limits = map_limits(catalog)
    assert limits.array_bytes < 4096  # map's outputs: a few floats per config
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child = server.fork()
    started = time.monotonic()
    with pytest.raises(ChildDied) as died:
        child.ask({"code": FORGED}, timeout=60, limits=limits)
    child.kill()
    assert "larger than the check asked for" in died.value.why and "nothing of it was read" in died.value.why
    assert time.monotonic() - started < 20  # at its length, not after 600 MB
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024  # KB: under 100 MB


def test_without_limits_the_same_answer_is_read_in_full():
    """The case the limits close: the wire alone takes arrays up to 4 GB each."""
    read_fd, write_fd = os.pipe()
    header = b'{"ok": null}'
    os.write(write_fd, wire.LENGTH.pack(len(header)) + header + wire.LENGTH.pack(1) + wire.LENGTH.pack(600 << 20))
    os.close(write_fd)
    with pytest.raises(wire.WireClosed):  # it waits for the 600 MB it was promised
        wire.receive(read_fd, time.monotonic() + 5)
    os.close(read_fd)
    read_fd, write_fd = os.pipe()
    os.write(write_fd, wire.LENGTH.pack(len(header)) + header + wire.LENGTH.pack(1) + wire.LENGTH.pack(600 << 20))
    with pytest.raises(wire.WireTooLarge):  # with the check's limits: refused at the length
        wire.receive(read_fd, time.monotonic() + 5, limits=wire.Limits(arrays=1, array_bytes=4096))
    os.close(read_fd)
    os.close(write_fd)


def test_a_check_that_fills_its_folder_is_stopped_and_the_next_finds_it_empty(server):
    child = server.fork()
    with pytest.raises(ChildDied) as died:
        ask(child, "import time\nfor n in range(3):\n    open(f'big{n}', 'wb').write(b'x' * (30 << 20))\n"
                   "time.sleep(30)\nresult = 'wrote'")
    child.kill()
    assert f"more than {server.folder_cap_mb} MB into its folder" in died.value.why
    child = server.fork()
    try:
        assert ask(child, "import os\nresult = sorted(os.listdir('.'))") == ["stderr.txt"]
    finally:
        child.kill()


def test_one_file_larger_than_the_folders_cap_cannot_be_written(server):
    child = server.fork()
    try:
        said = ask(child, "try:\n    open('huge', 'wb').write(b'x' * (100 << 20)); result = 'written'\n"
                          "except OSError as e:\n    result = type(e).__name__\n")
    except ChildDied as e:  # SIGXFSZ ends it, where the signal is not ignored
        said = f"died {e.code}"
    finally:
        child.kill()
    assert said != "written"


# -- the runner ------------------------------------------------------------------------------------
MAP = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n"
WRONG = MAP.replace("a[i] + 10", "a[i] * 3")


def test_a_served_runner_checks_every_file_in_a_process_of_its_own_and_leaves_no_folder(monkeypatch):
    pids, folders = [], []
    with Runner("sim", session=SERVED) as served:
        server = served._fork_server()
        spawn = server._spawn

        def spawned(folder, *args):
            pid, pidfd = spawn(folder, *args)
            pids.append(pid)
            folders.append(folder)
            return pid, pidfd

        server._spawn = spawned
        for source, passes in ((MAP, True), (WRONG, False), (MAP, True)):
            assert served.check("map", source, "map.py").verdict.passed is passes
            assert served._child is None  # never a warm child for a served learner
        assert len(set(pids)) == len(pids) >= 3  # every check's process is new (and so is the spare after)
    assert folders and not any(os.path.exists(f) for f in folders)
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] in ("Z", "X")


def test_model_written_code_gets_a_fresh_process_beside_the_learners_warm_child(monkeypatch):
    with Runner("sim") as runner:
        assert runner.check("map", MAP, "map.py").verdict.passed
        warm = runner.pid
        assert runner.check("map", WRONG, "map.py", untrusted=True).verdict.passed is False
        assert runner.pid == warm and runner._server is not None  # the learner's child stayed warm
        assert runner.check("map", MAP, "map.py", untrusted=True).verdict.passed


HEAVY = ("from numba import cuda, float32\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n"
         "    cache = cuda.shared.array(64, float32)\n    cache[i] = a[i]\n    total = float32(0)\n"
         "    for k in range(90000):\n        total += cache[i] * float32(0)\n    out[i] = cache[i] + 10 + total\n")


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_an_honest_kernel_whose_trace_is_too_long_to_send_passes_with_its_trace_cut(monkeypatch):
    """A long trace is cut in the child (every detection ran on all of it), so the answer stays
    inside its limits: an honest heavy kernel is judged, not refused for its size."""
    from tutor.engine.child import SENT_EVENTS
    with Runner("sim", timeout=60, session=SERVED) as served:
        result = served.check("map", HEAVY, "map.py", seed=3)
        wrong = served.check("map", HEAVY.replace("cache[i] + 10", "cache[i] + 11"), "map.py", seed=3)
    assert result.verdict.passed, result.verdict.failures
    assert sum(len(r.trace.events) for r in result.runs) <= SENT_EVENTS + 64
    assert "the trace is cut" in result.runs[0].trace.printed
    failure = wrong.verdict.failures[0]
    assert failure.kind == "wrong_output" and "wrote it on line 12" in failure.message  # its writer, past the cut
