"""A fresh process for every untrusted check, forked from a warm parent.

A warm child keeps numba imported between runs, which makes a learner's check feel instant; it also
keeps whatever a check left in it (a patched module, a cache, files in its folder) for the next.
For code that is not the learner's own (a served room's learner, a model) every check gets a process
of its own instead, without paying numba's import each time:

- the **fork server** is started like every sandboxed child (cleared environment, its own folder
  and session, stdin and stdout /dev/null, a network namespace of its own) and warms up once
  (numba imported, the compiler run, the content read), but is not confined, so that it may fork;
- for each check it forks a child that leaves the server's session for one of its own, takes a
  fresh folder as HOME, TMPDIR and cwd, confines itself (rlimits, Landlock to that folder, seccomp:
  see sandbox.confine) and only then reads the check's requests, on pipes of its own;
- when the verdict is in, the parent kills the child's session and removes its folder, and has the
  server fork the next check's child at once: a spare, which confines itself and readies what each
  process must make for itself (on a GPU its CUDA context, about 0.4 s on an H100) while the learner
  reads the verdict. It has run nothing of anyone's when its check comes.

The server reads only what its parent sends it (a fork request, the child's pipes and stderr);
nothing a child says passes through it. It hands back a pidfd for each child, so the parent can
tell and signal that one process without a race against pid reuse, and the exit status on request.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from . import wire
from .sandbox import (ROOT, Child, ChildDied, _quiet_stdio, answer_requests, clean_env, confine_and_ready,
                      isolate_network, stderr_tail)

ENV = "GPU_TUTOR_FORKSERVER"
CHECK_FOLDER_MB = 64   # all a fresh child may write into its folder (one file is capped alike)
START_GRACE = 10.0     # a forked child's first answer: the file's own compile, numba is warm
MAX_STATUSES = 256


class ForkServer:
    """The warm parent of fresh children; `fork()` gives a ForkedChild, a Child whose process is new."""

    def __init__(self, module: str, args: list[str] = (), *, memory_mb: int = 4096, gpu: bool = False,
                 cpu_seconds: int = 0, env: dict | None = None, read_paths: list = (),
                 folder_cap_mb: int = CHECK_FOLDER_MB):
        self.module, self.args = module, [str(a) for a in args]
        self.memory_mb, self.gpu, self.cpu_seconds = memory_mb, gpu, cpu_seconds
        self.extra_env = dict(env or {})
        self.read_paths = [str(p) for p in read_paths]
        self.folder_cap_mb = folder_cap_mb
        self.proc: subprocess.Popen | None = None
        self.folder: str | None = None
        self.notes: list[str] = []
        self._control: socket.socket | None = None
        self._ready = False
        self._spare: ForkedChild | None = None
        self._lock = threading.Lock()

    # -- the server's process -----------------------------------------------------------------------
    def start(self) -> None:
        """Start the server now (it warms up while the learner types); returns at once."""
        with self._lock:
            self._start()

    def _start(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            return
        self._stop()
        self.folder = tempfile.mkdtemp(prefix="gpu-tutor-forkserver-")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        settings = {"control": theirs.fileno(), "module": self.module, "args": self.args,
                    "child": {"memory_mb": 0 if self.gpu else self.memory_mb, "gpu": self.gpu,
                              "cpu_seconds": self.cpu_seconds, "read_paths": self.read_paths + [str(ROOT)]}}
        env = clean_env({**self.extra_env, ENV: json.dumps(settings)}, home=self.folder)
        stderr = open(os.path.join(self.folder, "stderr.txt"), "wb")
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "tutor.engine.process.forkserver"], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=stderr, env=env, cwd=self.folder,
                                         pass_fds=(theirs.fileno(),), start_new_session=True, close_fds=True)
        finally:
            stderr.close()
            theirs.close()
        self._control = ours
        self._ready = False

    def _wait_ready(self, deadline: float) -> None:
        if not self._ready:
            hello, _ = self._receive(deadline)
            self.notes = [str(n) for n in hello.get("notes", [])] if isinstance(hello, dict) else []
            self._ready = True

    def wait_ready(self, timeout: float = 60.0) -> None:
        with self._lock:
            self._start()
            self._wait_ready(time.monotonic() + timeout)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.kill()
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        if self._control is not None:
            self._control.close()  # the server sees its channel close and ends
            self._control = None
        proc, self.proc = self.proc, None
        if proc is not None:
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                proc.wait(timeout=5)
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    # -- asking it ----------------------------------------------------------------------------------
    def fork(self, *, start_grace: float = 60.0) -> ForkedChild:
        """A child that has run nothing yet: the spare when there is one, else a new one that its first
        request forks (see ForkedChild.start)."""
        spare, self._spare = self._spare, None
        if spare is not None and spare.alive():
            return spare
        if spare is not None:
            spare.kill()
        return ForkedChild(self, start_grace)

    def make_spare(self, *, start_grace: float = 60.0) -> None:
        """Fork the next check's child now, if the server is warm and there is none; never raises
        (a spare only saves the next check a moment)."""
        if self._spare is not None or not self._ready or not self.alive():
            return
        spare = ForkedChild(self, start_grace)
        try:
            spare.start()
        except Exception:  # noqa: BLE001 - the next check forks its own, and says what is wrong
            spare.kill()
            return
        self._spare = spare

    def _spawn(self, folder: str, fds: list[int], start_grace: float) -> tuple[int, int | None]:
        """Fork a child with these (request, answer, stderr) descriptors: its (pid, pidfd)."""
        with self._lock:
            self._start()
            deadline = time.monotonic() + start_grace
            try:
                self._wait_ready(deadline)
                self._send({"op": "fork", "folder": folder}, fds)
                answer, passed = self._receive(deadline)
            except (OSError, wire.WireError) as e:
                tail = stderr_tail(self.folder)
                self._stop()
                raise ChildDied(None, tail, why=f"the fork server ended ({e})") from None
        pidfd = passed[0] if passed else None
        return int(answer["pid"]), pidfd

    def status(self, pid: int) -> int | None:
        """A finished child's exit status as Popen gives it (-signal when killed), or None."""
        with self._lock:
            if self._control is None:
                return None
            try:
                self._send({"op": "status", "pid": pid}, [])
                answer, _ = self._receive(time.monotonic() + 5)
            except (OSError, wire.WireError):
                return None
        code = answer.get("code") if isinstance(answer, dict) else None
        return code if isinstance(code, int) else None

    def _send(self, message: dict, fds: list[int]) -> None:
        _send(self._control, message, fds)

    def _receive(self, deadline: float):
        """One message from the server: (JSON, descriptors passed with it)."""
        if not self._control:
            raise wire.WireClosed("the fork server is not running")
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self._control], [], [], left)[0]:
            raise wire.WireTimeout("the fork server did not answer in time")
        message, fds = _receive(self._control)
        if message is None:
            raise wire.WireClosed("the fork server's channel closed")
        return message, fds

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _ForkedProcess:
    """A forked child as much of a Popen as Child needs: pid, poll, wait (through its pidfd)."""

    def __init__(self, server: ForkServer, pid: int, pidfd: int | None):
        self.server, self.pid, self.pidfd = server, pid, pidfd
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and self._ended(0):
            self.returncode = self.server.status(self.pid)
            if self.returncode is None:
                self.returncode = -signal.SIGKILL  # gone, and its status with the server: say killed
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None and not self._ended(timeout):
            raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout)
        return self.poll()

    def _ended(self, timeout: float | None) -> bool:
        if self.pidfd is None:  # no pidfd here: whether /proc still shows it running
            return _ended_by_proc(self.pid, timeout)
        return bool(select.select([self.pidfd], [], [], timeout)[0])

    def signal(self, sig: int) -> None:
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, sig)
            else:
                os.kill(self.pid, sig)
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


class ForkedChild(Child):
    """One check's process: forked on its first request, killed with its folder at `kill()`.
    Everything else (asking, timeouts, a dead child's message) is Child's."""

    def __init__(self, server: ForkServer, start_grace: float):
        super().__init__(server.module, server.args, memory_mb=server.memory_mb, gpu=server.gpu,
                         cpu_seconds=server.cpu_seconds, read_paths=server.read_paths)
        self.server = server
        self.server_start_grace = start_grace
        self.folder_cap_mb = server.folder_cap_mb

    def start(self) -> None:
        if self.alive():
            return
        self.kill()
        self.folder = tempfile.mkdtemp(prefix="gpu-tutor-check-")
        req_r, req_w = os.pipe()
        ans_r, ans_w = os.pipe()
        stderr = os.open(os.path.join(self.folder, "stderr.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            pid, pidfd = self.server._spawn(self.folder, [req_r, ans_w, stderr], self.server_start_grace)
        except BaseException:
            for fd in (req_w, ans_r):
                os.close(fd)
            raise
        finally:
            for fd in (req_r, ans_w, stderr):
                os.close(fd)
        self.proc = _ForkedProcess(self.server, pid, pidfd)
        self.notes = []
        self._to_child, self._from_child = req_w, ans_r
        self._ready = False
        self.answered = 0

    def terminate(self) -> None:
        proc = self.proc
        if isinstance(proc, _ForkedProcess):
            proc.signal(signal.SIGKILL)
            from .sandbox import _signal, session_members

            for pid in session_members(proc.pid):
                _signal(pid)

    def kill(self) -> None:
        proc = self.proc
        super().kill()
        if isinstance(proc, _ForkedProcess):
            proc.close()


def _ended_by_proc(pid: int, timeout: float | None) -> bool:
    deadline = time.monotonic() + (timeout or 0)
    while True:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            if stat[stat.rfind(b")") + 2:].split()[0] in (b"Z", b"X"):
                return True
        except OSError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


# -- the server's half ------------------------------------------------------------------------------
def main() -> int:
    import importlib

    raw = os.environ.pop(ENV, None)
    if not raw:
        raise SystemExit("this module runs only as gpu-tutor's fork server")
    conf = json.loads(raw)
    control = socket.socket(fileno=conf["control"])
    notes = isolate_network()  # while the process has one thread; every child inherits it
    _quiet_stdio()
    handle, warm, fresh = importlib.import_module(conf["module"]).handler(conf["args"])
    if warm is not None:
        try:
            warm()
        except Exception:
            pass  # reported properly by the first real request
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    if threads > 1:  # forking a process with threads copies only the one that forks
        notes.append(f"the fork server had {threads} threads when it forked")
    _send(control, {"ready": True, "notes": notes})
    statuses: dict[int, int] = {}
    while True:
        try:
            message, fds = _receive(control)
        except (OSError, ValueError):
            return 0
        if message is None:
            return 0
        _reap(statuses)
        if message.get("op") == "fork" and len(fds) == 3:
            pid = os.fork()
            if pid == 0:
                _child(control, conf["child"], message["folder"], fds, handle, fresh, notes)  # never returns
            pidfd = _pidfd(pid)
            for fd in fds:
                os.close(fd)
            _send(control, {"pid": pid}, [pidfd] if pidfd is not None else [])
            if pidfd is not None:
                os.close(pidfd)
        elif message.get("op") == "status":
            _send(control, {"code": _status_of(int(message["pid"]), statuses)})
        else:
            for fd in fds:
                os.close(fd)
            _send(control, {"error": "unknown request"})


def _child(control, conf: dict, folder: str, fds: list[int], handle, fresh, notes: list[str]) -> None:
    """The forked child: a session, a folder and limits of its own, what each process makes for
    itself (`fresh`), then the check's requests. It never returns into the server's loop."""
    code = 1
    try:
        control.close()
        os.setsid()
        requests, answers, stderr = fds
        os.dup2(stderr, 2)
        os.close(stderr)
        os.chdir(folder)
        os.environ.update(HOME=folder, TMPDIR=folder, NUMBA_CACHE_DIR=os.path.join(folder, "numba-cache"))
        tempfile.tempdir = None
        limits = dict(conf, folder=folder, file_size_mb=CHECK_FOLDER_MB)
        answer_requests(requests, answers, handle, list(notes) + confine_and_ready(limits, fresh))
        code = 0
    finally:
        os._exit(code)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _reap(statuses: dict) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        statuses[pid] = os.waitstatus_to_exitcode(status)
        while len(statuses) > MAX_STATUSES:
            statuses.pop(next(iter(statuses)))


def _status_of(pid: int, statuses: dict) -> int | None:
    deadline = time.monotonic() + 2
    while pid not in statuses:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            statuses[pid] = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() > deadline:
            return None
        time.sleep(0.02)
    return statuses.pop(pid)


def _send(control: socket.socket, message: dict, fds: list[int] = ()) -> None:
    """One message on the control channel, either way: a length, JSON, and descriptors beside it."""
    data = json.dumps(message).encode()
    socket.send_fds(control, [wire.LENGTH.pack(len(data)) + data], list(fds))


def _receive(control: socket.socket):
    """One message from the control channel: (JSON, descriptors), or (None, []) once it closed."""
    data, fds, _, _ = socket.recv_fds(control, 1 << 16, 4)
    if not data:
        return None, []
    (size,) = wire.LENGTH.unpack(data[:wire.LENGTH.size])
    body = data[wire.LENGTH.size:]
    while len(body) < size:
        more = control.recv(size - len(body))
        if not more:
            return None, []
        body += more
    return json.loads(body), fds


if __name__ == "__main__":
    sys.exit(main())
