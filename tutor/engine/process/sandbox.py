"""The one launcher for code a learner or a model wrote: a child that cannot reach out.

Every process that runs such code (the runner's warm child, the verifier's child, the leak guard's
and the optimiser's checks) starts through `Child`, and confines itself with `confine()` before it
reads its first request:
- the environment is cleared to an allow-list (no keys, tokens, provider or cloud variables), HOME,
  TMPDIR and cwd are a fresh folder of its own, stdin and stdout are /dev/null;
- it runs in its own session, and whatever else is found in that session is killed at the end of
  every request (not only on a timeout);
- rlimits: address space, file size, no core files (and processes where the kernel counts them);
- on Linux, a seccomp filter refuses new processes (fork, exec), signals to other processes,
  ptrace, namespaces and every socket but a Unix one; a network namespace of its own leaves it no
  network device at all; Landlock lets it write only inside its own folder and read only the
  Python installation, the project and system libraries (so not the user's files, nor
  /proc/<parent>/environ). What the OS refuses becomes a note, shown in the verdict;
- requests and answers travel on a dedicated pipe pair as wire messages (JSON and numpy
  buffers), never pickle, never stdout.

The child half is `serve()`: `python -m tutor.engine.child ...` and the verifier's child call it.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tutor.store import folder_size
from . import wire

ROOT = Path(__file__).resolve().parents[3]
ENV_KEEP = {"PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "PYTHONHASHSEED", "VIRTUAL_ENV",
            "LD_LIBRARY_PATH", "SYSTEMROOT", "NUMBA_CUDA_DRIVER", "CUDA_HOME", "CUDA_PATH",
            "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
            "GPU_TUTOR_NO_GPU", "TUTOR_SIM_LANES"}
ENV_KEEP_PREFIXES = ("LC_", "NUMBA_")
ENV_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION")
FILE_SIZE_MB = 256
QUIET_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


HELLO = wire.Limits.of(1)  # a child's first word: ready, and its notes (1 MB, no arrays)


class ChildDied(Exception):
    """The child ended (exit status or -signal in `code`), or was ended for what it sent (`why`)."""

    def __init__(self, code: int | None, stderr: str = "", why: str = ""):
        super().__init__(why or f"exit status {code}")
        self.code, self.stderr, self.why = code, stderr, why

    def how(self, memory_mb: int) -> str:
        """How the process ended, in words that follow "The process ...": killed (at a memory cap
        of `memory_mb`, most likely), crashed with a signal, stopped answering, or exited."""
        code = self.code
        if code is not None and code < 0 and -code == signal.SIGKILL:
            return f"was killed (out of memory? the cap is {memory_mb} MB)"
        if code is not None and code < 0:
            return f"crashed with signal {signal.Signals(-code).name}"
        if code is None:
            return "stopped answering"
        return f"exited with status {code}"


class ChildTimeout(Exception):
    pass


class ChildFailed(Exception):
    """The child answered with an error of its own (not the code it ran): (name, message, tb)."""

    def __init__(self, name: str, message: str, tb: str = ""):
        super().__init__(f"{name}: {message}")
        self.name, self.message, self.tb = name, message, tb


def clean_env(extra: dict | None = None, home: str | None = None) -> dict:
    """The environment a sandboxed child sees: only what Python, numba and CUDA need."""
    env = {}
    for key, value in os.environ.items():
        if key in ENV_KEEP or key.startswith(ENV_KEEP_PREFIXES):
            if not any(word in key.upper() for word in ENV_SECRET_WORDS):
                env[key] = value
    env.update(QUIET_THREADS)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if home:
        env.update(HOME=home, TMPDIR=home, NUMBA_CACHE_DIR=os.path.join(home, "numba-cache"))
    env.update(extra or {})
    return env


class Child:
    """One sandboxed child process (`python -m MODULE ARGS`) and its answer channel.

    `ask` sends a request and waits for the answer; `end_request` kills anything else that turned
    up in the child's session; `kill` ends it all and removes its folder."""

    folder_cap_mb: int | None = None  # all the child may write into its folder (None: each file's cap only)

    def __init__(self, module: str, args: list[str] = (), *, memory_mb: int = 4096, gpu: bool = False,
                 cpu_seconds: int = 0, env: dict | None = None, read_paths: list = ()):
        self.module, self.args = module, [str(a) for a in args]
        self.memory_mb, self.gpu, self.cpu_seconds = memory_mb, gpu, cpu_seconds
        self.extra_env = dict(env or {})
        self.read_paths = [str(p) for p in read_paths]
        self.proc: subprocess.Popen | None = None
        self.folder: str | None = None
        self.notes: list[str] = []
        self._to_child = self._from_child = None
        self._ready = False
        self.answered = 0  # requests answered by this process (the first pays numba's first compile)
        self.stopped_for = ""  # why the parent ended it, when it did (its folder, its answer)

    def start(self) -> None:
        if self.alive():
            return
        self.kill()
        self.folder = tempfile.mkdtemp(prefix="gpu-tutor-child-")
        req_r, req_w = os.pipe()
        ans_r, ans_w = os.pipe()
        settings = {"wire": [req_r, ans_w], "memory_mb": 0 if self.gpu else self.memory_mb, "gpu": self.gpu,
                    "cpu_seconds": self.cpu_seconds, "folder": self.folder,
                    "read_paths": self.read_paths + [str(ROOT)]}
        env = clean_env({**self.extra_env, "GPU_TUTOR_SANDBOX": _json(settings)}, home=self.folder)
        stderr = open(os.path.join(self.folder, "stderr.txt"), "wb")
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", self.module, *self.args], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=stderr, env=env, cwd=self.folder,
                                         pass_fds=(req_r, ans_w), start_new_session=True, close_fds=True)
        finally:
            stderr.close()
            os.close(req_r)
            os.close(ans_w)
        self._to_child, self._from_child = req_w, ans_r
        self._ready = False
        self.answered = 0

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ask(self, header: dict, arrays: list | None = None, *, timeout: float, start_grace: float = 60.0,
            watch=None, limits: wire.Limits | None = None):
        """Send one request and return the child's (header, arrays). Raises ChildTimeout (the child
        is then killed), ChildDied, or ChildFailed. `watch()` is polled while waiting; it may kill.
        `limits`: the most the answer may hold, from what the request asked for; a larger answer is
        refused unread and its child ended (ChildDied)."""
        self.start()
        if not self._ready:
            hello, _ = self._receive(time.monotonic() + start_grace, watch, HELLO)
            self.notes = [str(n) for n in hello.get("notes", [])] if isinstance(hello, dict) else []
            self._ready = True
        try:
            wire.send(self._to_child, header, arrays, deadline=time.monotonic() + timeout)
        except wire.WireTimeout:
            self.kill()
            raise ChildTimeout() from None
        except OSError:
            raise self._died() from None
        answer, buffers = self._receive(time.monotonic() + timeout, watch, limits)
        self.answered += 1
        if not isinstance(answer, dict):
            self.kill()
            raise ChildDied(None, why="it answered with something that is not a message of ours")
        if "error" in answer:
            e = answer["error"] if isinstance(answer["error"], dict) else {}
            raise ChildFailed(str(e.get("name", "Error")), str(e.get("message", "")), str(e.get("tb", "")))
        return answer.get("ok"), buffers

    def _receive(self, deadline, watch, limits=None):
        def alive():
            if watch is not None:
                watch(self)
            if self.folder_cap_mb and self.folder and folder_size(Path(self.folder)) > self.folder_cap_mb << 20:
                self.stopped_for = f"it wrote more than {self.folder_cap_mb} MB into its folder"
                self.terminate()
            return self.alive()

        try:
            return wire.receive(self._from_child, deadline, alive, limits)
        except wire.WireTimeout:
            self.kill()
            raise ChildTimeout() from None
        except (wire.WireClosed, OSError, ValueError):  # ended (terminate() from another thread, say)
            raise self._died() from None
        except wire.WireTooLarge as e:  # refused before it was read
            self.kill()
            raise ChildDied(None, why=f"its answer was larger than the check asked for ({e}); nothing of it "
                                      "was read") from None
        except wire.WireError as e:  # a child that speaks garbage is ended, and says so
            self.kill()
            raise ChildDied(None, why=f"it sent something that is not an answer ({e})") from None

    def _died(self) -> ChildDied:
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        tail = self.stderr_tail()
        why = self.stopped_for
        self.kill()
        return ChildDied(code, tail, why=why)

    def stderr_tail(self, lines: int = 3) -> str:
        return stderr_tail(self.folder, lines)

    def end_request(self) -> None:
        """Whatever else runs in the child's session (a fork that got through) is killed now."""
        if self.proc is not None:
            for pid in session_members(self.proc.pid):
                if pid != self.proc.pid:
                    _signal(pid)

    def close(self) -> None:
        """End the child now. It holds nothing worth a goodbye (every answer is in, its folder goes
        with it), and waiting for a warm child's interpreter to wind numba down cost a third of a
        second a child: the CLI's prompt and the app's quit waited for it."""
        self.kill()

    def terminate(self) -> None:
        """End the child and its session now, from any thread; the thread that asked sees it end."""
        proc = self.proc
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            for pid in session_members(proc.pid):
                _signal(pid)

    def kill(self) -> None:
        """End the child and let go of everything it had: its channel and its folder."""
        self.terminate()
        proc, self.proc = self.proc, None
        if proc is not None:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for fd in (self._to_child, self._from_child):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._to_child = self._from_child = None
        self._ready = False
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()


def stderr_tail(folder: str | None, lines: int = 3) -> str:
    """The last lines a child (or the fork server) wrote to stderr.txt in its folder."""
    if not folder:
        return ""
    try:
        with open(os.path.join(folder, "stderr.txt"), "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4096))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


def session_members(sid: int) -> list[int]:
    """Processes whose session is `sid` (Linux /proc; elsewhere only the process group is killed)."""
    members = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return members
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 3 and int(fields[3]) == sid:
            members.append(int(name))
    return members


def _signal(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _json(obj) -> str:
    import json

    return json.dumps(obj)


# -- the child's half --------------------------------------------------------------------------------
def settings() -> dict:
    import json

    raw = os.environ.get("GPU_TUTOR_SANDBOX")
    if not raw:
        raise SystemExit("this module runs only as a sandboxed child of gpu-tutor")
    return json.loads(raw)


def serve(handle, warm=None, fresh=None) -> int:
    """The child's loop: isolate, warm up, confine, make what this process needs of its own
    (`fresh`, e.g. a CUDA context), then answer requests until the channel closes.
    `handle(header, arrays) -> header | (header, arrays)`; an exception of ours is answered as an
    error message rather than ending the child."""
    conf = settings()
    os.environ.pop("GPU_TUTOR_SANDBOX", None)
    requests, answers = conf["wire"]
    notes = isolate_network()
    _quiet_stdio()
    if warm is not None:
        try:
            warm()
        except Exception:
            pass  # reported properly by the first real request
    answer_requests(requests, answers, handle, notes + confine_and_ready(conf, fresh))
    return 0


def confine_and_ready(conf: dict, fresh=None) -> list[str]:
    """Confine this process, then make what it needs of its own (`fresh`: a GPU's context), before
    any request is read. Returns the notes of what the OS would not give."""
    notes = confine(conf)
    if fresh is not None:
        try:
            fresh()
        except Exception:  # noqa: BLE001 - reported properly by the first real request
            pass
    return notes


def answer_requests(requests: int, answers: int, handle, notes: list[str]) -> None:
    """Say the child is ready (with what the OS would not give), then answer until the channel closes."""
    wire.send(answers, {"ready": True, "notes": notes})
    while True:
        try:
            header, arrays = wire.receive(requests)
        except wire.WireClosed:
            return
        try:
            result = handle(header, arrays)
            if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], list):
                wire.send(answers, {"ok": result[0]}, result[1])
            else:
                wire.send(answers, {"ok": result})
        except Exception as e:
            import traceback

            wire.send(answers, {"error": {"name": type(e).__name__, "message": str(e),
                                          "tb": traceback.format_exc()}})


def _quiet_stdio() -> None:
    """Nothing a kernel prints reaches a terminal or the answer channel (Python-level prints are
    captured into the verdict by the checker)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(devnull, fd)
    os.close(devnull)
    sys.stdout = open(os.devnull, "w")


def isolate_network() -> list[str]:
    """A network namespace of the child's own (no device but a down loopback). Must run while the
    process is single-threaded (an unprivileged user namespace requires it)."""
    if not sys.platform.startswith("linux"):
        return [f"no network isolation on {sys.platform}: the check runs with the network reachable"]
    libc = ctypes.CDLL(None, use_errno=True)
    flags = CLONE_NEWNET if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNET
    if libc.unshare(flags) != 0:
        err = ctypes.get_errno()
        return [f"no network namespace here ({os.strerror(err)}); sockets are still refused by the seccomp filter"]
    return []


def confine(conf: dict) -> list[str]:
    """Limits the child puts on itself before it runs any code it was sent. Returns notes for
    what this OS would not give."""
    import resource

    notes = []
    memory_mb = int(conf.get("memory_mb") or 0)
    if memory_mb > 0:
        _limit(resource.RLIMIT_AS, memory_mb << 20)
    _limit(resource.RLIMIT_FSIZE, int(conf.get("file_size_mb") or FILE_SIZE_MB) << 20)
    _limit(resource.RLIMIT_CORE, 0)
    if conf.get("cpu_seconds"):
        _limit(resource.RLIMIT_CPU, int(conf["cpu_seconds"]))
    if os.geteuid() != 0:
        _limit(resource.RLIMIT_NPROC, _processes_of_user() + 64)
    if not sys.platform.startswith("linux"):
        return notes + [f"no seccomp or Landlock on {sys.platform}: processes, files and sockets are not fenced"]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return notes + ["the kernel refused no_new_privs: no seccomp filter and no Landlock"]
    notes += _landlock(libc, conf)
    notes += _seccomp(libc)
    return notes


def _limit(which, value: int) -> None:
    import resource

    try:
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value if hard == resource.RLIM_INFINITY else hard))
    except (ValueError, OSError):
        pass


def _processes_of_user() -> int:
    uid, n = str(os.getuid()), 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/status") as f:
                    for line in f:
                        if line.startswith("Uid:"):
                            n += line.split()[1] == uid
                            break
            except OSError:
                pass
    return n


# -- Landlock: where the child may read and write ----------------------------------------------------
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
PR_SET_NO_NEW_PRIVS = 38
_LL_CREATE, _LL_ADD_RULE, _LL_RESTRICT = 444, 445, 446  # the same numbers on every architecture
LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR = 1, 2, 4, 8
LL_WRITES = sum(1 << i for i in range(4, 13))  # remove, make char/dir/reg/sock/fifo/block/sym
LL_REFER, LL_TRUNCATE, LL_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
LL_READS = LL_EXECUTE | LL_READ_FILE | LL_READ_DIR
SYSTEM_READS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/opt", "/sys",
                "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/driver", "/proc/sys/vm")
# /etc entry by entry, but for the machine's secrets: a child running as root (a room served as root)
# could otherwise read the password hashes. Nothing a kernel needs is among them.
ETC_SECRETS = {"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d", "ssh", "ssl", "pki",
               "security", "krb5.keytab", "credstore", "credstore.encrypted", ".pwd.lock"}
# Devices one by one: a rule on /dev would let a child running as root read a raw disk.
DEVICE_READS = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full")
GPU_DEVICES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """This kernel's Landlock version (0: none, or not Linux), asked without creating a ruleset."""
    if not sys.platform.startswith("linux"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return max(0, libc.syscall(_LL_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1)))


def _landlock(libc, conf) -> list[str]:
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(_LL_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return ["no Landlock in this kernel: the child can read and write files as the user"]
    fs = LL_READS | LL_WRITE_FILE | LL_WRITES
    fs |= (LL_REFER if abi >= 2 else 0) | (LL_TRUNCATE if abi >= 3 else 0) | (LL_IOCTL_DEV if abi >= 5 else 0)
    attr = _RulesetAttr(fs, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)  # tcp bind+connect; scoped signals
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = libc.syscall(_LL_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return [f"Landlock refused a ruleset ({os.strerror(ctypes.get_errno())})"]
    try:
        for path in readable_paths(sys.path, conf.get("read_paths", [])):
            _allow(libc, ruleset, path, LL_READS, fs)
        _allow(libc, ruleset, conf["folder"], fs, fs)  # its own folder: everything
        # Its own /proc entry, written too: the CUDA driver's cuInit fails (CUDA_ERROR_OPERATING_SYSTEM)
        # when it cannot write there; what is written there concerns this process alone.
        _allow(libc, ruleset, f"/proc/{os.getpid()}", LL_READS | LL_WRITE_FILE | (LL_TRUNCATE if abi >= 3 else 0), fs)
        _allow(libc, ruleset, "/dev", LL_READ_DIR, fs)
        for device in DEVICE_READS:
            _allow(libc, ruleset, device, LL_READ_FILE | LL_WRITE_FILE | (LL_TRUNCATE if abi >= 3 else 0), fs)
        if conf.get("gpu"):  # the driver opens its device files read-write and talks through ioctls
            import glob

            for device in set(GPU_DEVICES) | set(glob.glob("/dev/nvidia[0-9]*")) | set(glob.glob("/dev/nvidia-caps")):
                _allow(libc, ruleset, device, LL_READS | LL_WRITE_FILE | (LL_IOCTL_DEV if abi >= 5 else 0), fs)
            _allow(libc, ruleset, "/dev/shm", fs, fs)
        if libc.syscall(_LL_RESTRICT, ruleset, ctypes.c_uint32(0)) != 0:
            return [f"Landlock refused to restrict the child ({os.strerror(ctypes.get_errno())})"]
    finally:
        os.close(ruleset)
    return []


def readable_paths(search_path, extra=()) -> set[str]:
    """What Landlock lets a child read (besides its own folder and a few devices): the system's
    libraries, Python, its module search path, `extra`, and the CUDA toolkit. The child asks with
    its own sys.path; a parent asks what its children will be able to read with `children_read()`."""
    reads = set(SYSTEM_READS) | {sys.prefix, sys.base_prefix, sys.exec_prefix} | _etc_reads()
    reads |= {p for p in search_path if p} | set(extra)
    reads |= {p for p in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p}
    reads |= {os.environ[k] for k in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(k)}  # NVVM, libdevice
    return reads


def _etc_reads() -> set[str]:
    try:
        return {os.path.join("/etc", name) for name in os.listdir("/etc") if name not in ETC_SECRETS}
    except OSError:
        return set()


def children_read(extra=()) -> set[str]:
    """The paths every sandboxed child of this process may read, as seen from here: a child's module
    search path is this one's without its first entry (the script's folder or cwd; the child's is its
    own folder) and with the project and $PYTHONPATH in front, as clean_env sets them."""
    search = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p] + sys.path[1:]
    return readable_paths(search, [str(ROOT), *extra])


def _allow(libc, ruleset, path, access, handled) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):  # a file takes only the accesses that make sense for a file
            access &= LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV
        rule = _PathBeneath(access & handled, fd)
        libc.syscall(_LL_ADD_RULE, ruleset, 1, ctypes.byref(rule), ctypes.c_uint32(0))
    finally:
        os.close(fd)


# -- seccomp: which system calls the child may make -------------------------------------------------
# Audit arch, and the numbers of the calls refused or inspected. Refused: new processes and programs
# (fork, vfork, execve, execveat), other processes' memory and signals (ptrace, process_vm_*, tkill,
# rt_(tg)sigqueueinfo, pidfd_send_signal/getfd), namespaces and mounts, io_uring, bpf, keyrings,
# modules, reboot, userfaultfd, perf; what Landlock does not fence for a child running as root:
# chmod/chown, extended attributes, file times, raising its own limits (setrlimit; prlimit64 only
# to read), the clock, the host name, swap, accounting, quotas, the kernel log, port I/O.
_ARCHES = {
    "x86_64": (0xC000003E, dict(
        deny=[57, 58, 59, 322, 101, 310, 311, 200, 129, 297, 424, 438, 272, 308, 165, 166, 155, 161, 425, 321,
              250, 248, 249, 246, 320, 175, 176, 313, 169, 323, 298, 442, 428, 429, 430, 432,
              90, 91, 92, 93, 94, 268, 260, 452, 188, 189, 190, 197, 198, 199, 132, 235, 261, 280,
              160, 164, 227, 159, 170, 171, 172, 173, 167, 168, 163, 179, 103],
        clone=56, clone3=435, socket=41, kill=62, tgkill=234, prlimit=302)),
    "aarch64": (0xC00000B7, dict(
        deny=[221, 281, 117, 270, 271, 130, 138, 240, 424, 438, 97, 268, 40, 39, 41, 51, 425, 280, 219, 217,
              218, 104, 294, 105, 106, 273, 142, 282, 241, 442, 428, 429, 430, 432,
              52, 53, 452, 54, 55, 5, 6, 7, 14, 15, 16, 88, 164, 170, 112, 171, 161, 162, 224, 225, 89,
              60, 116],
        clone=220, clone3=435, socket=198, kill=129, tgkill=131, prlimit=261)),
}
_RET_ALLOW = 0x7FFF0000
_EPERM, _EACCES, _ENOSYS = 1, 13, 38
_CLONE_THREAD = 0x00010000
_AF_UNIX = 1


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def _seccomp(libc) -> list[str]:
    import platform

    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    if machine not in _ARCHES:
        return [f"no seccomp filter for {machine}: forks and sockets are limited only by rlimits"]
    program = seccomp_program(machine, os.getpid())
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    prog = _SockFprog(len(program), filters)
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        return [f"the kernel refused the seccomp filter ({os.strerror(ctypes.get_errno())})"]
    return []


def seccomp_program(machine: str, pid: int) -> list[tuple]:
    """A classic-BPF program over seccomp_data {nr @0, arch @4, args[i] @16+8i}: refuse new
    processes and programs, signals to anyone but ourselves, every socket but AF_UNIX, and the
    calls listed in _ARCHES."""
    arch, calls = _ARCHES[machine]
    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    errno = lambda e: 0x00050000 | e  # noqa: E731 - SECCOMP_RET_ERRNO
    code: list = [(ld, "arch"), (jeq, arch, "nr", "kill"), ("label", "nr"), (ld, "nr")]
    if machine == "x86_64":
        code += [(0x35, 0x40000000, "deny", None)]  # jge: the x32 ABI's numbers
    for nr in calls["deny"]:
        code.append((jeq, nr, "deny", None))
    code += [(jeq, calls["clone"], "clone", None), (jeq, calls["clone3"], "nosys", None),
             (jeq, calls["socket"], "socket", None), (jeq, calls["kill"], "signal", None),
             (jeq, calls["tgkill"], "signal", None), (jeq, calls["prlimit"], "prlimit", None), (ret, _RET_ALLOW),
             ("label", "prlimit"), (ld, "arg2"), (jeq, 0, "prlimit_hi", "deny"),
             ("label", "prlimit_hi"), (ld, "arg2_hi"), (jeq, 0, "allow", "deny"),
             ("label", "clone"), (ld, "arg0"), (jset, _CLONE_THREAD, "allow", "deny"),
             ("label", "socket"), (ld, "arg0"), (jeq, _AF_UNIX, "allow", "eacces"),
             ("label", "signal"), (ld, "arg0"), (jeq, pid, "allow", "deny"),
             ("label", "allow"), (ret, _RET_ALLOW),
             ("label", "deny"), (ret, errno(_EPERM)),
             ("label", "eacces"), (ret, errno(_EACCES)),
             ("label", "nosys"), (ret, errno(_ENOSYS)),
             ("label", "kill"), (ret, 0x80000000)]  # SECCOMP_RET_KILL_PROCESS: a foreign ABI
    return _assemble(code)


def _assemble(code) -> list[tuple]:
    offsets = {"nr": 0, "arch": 4, "arg0": 16, "arg2": 32, "arg2_hi": 36}
    labels, n = {}, 0
    for ins in code:
        if ins[0] == "label":
            labels[ins[1]] = n
        else:
            n += 1
    out = []
    for ins in code:
        if ins[0] == "label":
            continue
        op = ins[0]
        if op == 0x20:
            out.append((op, 0, 0, offsets[ins[1]]))
        elif op == 0x06:
            out.append((op, 0, 0, ins[1]))
        else:
            here = len(out) + 1
            jt = labels[ins[2]] - here
            jf = 0 if ins[3] is None else labels[ins[3]] - here
            if not (0 <= jt < 256 and 0 <= jf < 256):
                raise ValueError("a seccomp jump is out of range")
            out.append((op, jt, jf, ins[1] & 0xFFFFFFFF))
    return out
