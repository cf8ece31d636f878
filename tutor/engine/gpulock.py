"""GPU runs from many learners' processes on one server take turns, first come first served.

Thirty learners sharing one GPU over SSH each run their own app, and each app has its own warm GPU
child. If they all compiled and launched at once, every run would crawl and a few would run out of
GPU memory. So a GPU run first takes its turn through a lock file in a folder every learner can
write (`GPU_TUTOR_GPU_QUEUE`, by default `gpu-tutor-gpu-queue` in the system's temporary folder):

    QUEUE/gpu.lock                    flock'd exclusively by the one process whose run is on the GPU
    QUEUE/<time>-<pid>-<tag>.ticket   one per process waiting, flock'd by its owner while it waits

The lock itself is `fcntl.flock`, which the kernel releases when its holder exits or is killed, so
a crashed learner never wedges the queue. The tickets give the order (their names sort by the time
they were taken) and the count shown to a waiting learner, "waiting for GPU (n ahead)": the holder
plus the live tickets before ours. A ticket whose owner died is no longer locked; whoever notices
removes it. A ticket is locked before it gets its visible name, so no one mistakes a new ticket for
a dead one.

Keep the folder on a local disk (flock over NFS is not to be trusted). Where `fcntl` does not exist
(Windows) or the variable says `off`, runs do not queue. The simulator never queues: it runs on the
CPU cores of each learner's own process.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

QUEUE_ENV = "GPU_TUTOR_GPU_QUEUE"
LOCK_NAME = "gpu.lock"
TICKET_SUFFIX = ".ticket"
POLL_S = 0.1


class QueueCancelled(Exception):
    """The caller gave up its place (a newer run replaced this one)."""


class GpuQueue:
    """A first-come-first-served turn on the GPU, shared by every process that names `folder`."""

    def __init__(self, folder: str | Path, *, poll_s: float = POLL_S) -> None:
        self.folder = Path(folder)
        self.poll_s = poll_s

    @contextlib.contextmanager
    def turn(self, on_wait: Callable[[int], object] | None = None,
             cancelled: Callable[[], bool] | None = None) -> Iterator[None]:
        """Hold the GPU for the body of the `with`. While others are ahead, `on_wait(n)` is called
        each time the number ahead changes; raises QueueCancelled as soon as `cancelled()` is true."""
        import fcntl

        self._prepare_folder()
        lock_fd = _open_shared(self.folder / LOCK_NAME)
        try:
            self._wait_for_turn(lock_fd, on_wait, cancelled)
            try:
                yield
            finally:
                fcntl.flock(lock_fd, fcntl.LOCK_UN)
        finally:
            os.close(lock_fd)

    def waiting(self) -> int:
        """How many processes are waiting now (live tickets), not counting the holder."""
        return len(self._live_tickets())

    def held(self) -> bool:
        """Whether some process holds the GPU now."""
        import fcntl

        path = self.folder / LOCK_NAME
        if not path.exists():
            return False
        fd = _open_shared(path)
        try:
            return _is_locked(fd, fcntl)
        finally:
            os.close(fd)

    # -- the waiting ------------------------------------------------------------------------------
    def _wait_for_turn(self, lock_fd: int, on_wait, cancelled) -> None:
        import fcntl

        ticket_fd, ticket = self._take_ticket()
        try:
            shown = None
            while True:
                if cancelled is not None and cancelled():
                    raise QueueCancelled()
                ahead = [t for t in self._live_tickets() if t < ticket]
                if not ahead:
                    try:
                        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        return
                    except BlockingIOError:
                        holder = 1
                else:
                    holder = 1 if _is_locked(lock_fd, fcntl) else 0
                n = len(ahead) + holder
                if n != shown and n > 0 and on_wait is not None:
                    on_wait(n)
                shown = n
                time.sleep(self.poll_s)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(self.folder / ticket)
            os.close(ticket_fd)

    def _take_ticket(self) -> tuple[int, str]:
        """A ticket file locked by us, under a name that sorts after every ticket taken before."""
        import fcntl

        name = f"{time.time_ns():020d}-{os.getpid():07d}-{secrets.token_hex(3)}{TICKET_SUFFIX}"
        draft = self.folder / f".{name}.draft"
        fd = os.open(draft, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _chmod(fd, 0o644)  # readable by the other learners, whatever our umask, so they can test it
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.rename(draft, self.folder / name)  # visible only once locked
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(draft)
            raise
        return fd, name

    def _live_tickets(self) -> list[str]:
        """Ticket names whose owners are alive (still hold their lock), in queue order."""
        import fcntl

        live = []
        try:
            names = sorted(p.name for p in self.folder.iterdir() if p.name.endswith(TICKET_SUFFIX))
        except OSError:
            return []
        for name in names:
            try:
                fd = os.open(self.folder / name, os.O_RDONLY)
            except FileNotFoundError:  # its owner just got its turn
                continue
            except OSError:  # unreadable (another user's umask): count it rather than jump the queue
                live.append(name)
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                live.append(name)
            else:  # nobody holds it: its owner died while waiting
                with contextlib.suppress(OSError):
                    os.unlink(self.folder / name)
            finally:
                os.close(fd)
        return live

    def _prepare_folder(self) -> None:
        if not self.folder.is_dir():
            self.folder.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):  # every learner's account may take a ticket
                os.chmod(self.folder, 0o1777)


def shared_queue() -> GpuQueue | None:
    """The queue every gpu-tutor process on this machine shares (None: runs do not queue)."""
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return None
    named = os.environ.get(QUEUE_ENV, "").strip()
    if named.lower() in ("off", "none", "0"):
        return None
    return GpuQueue(Path(named).expanduser() if named else Path(tempfile.gettempdir()) / "gpu-tutor-gpu-queue")


def waiting_text(ahead: int) -> str:
    return f"waiting for GPU ({ahead} ahead)"


def _open_shared(path: Path) -> int:
    """Open the lock file, creating it if need be. Opened without O_CREAT when it exists: Linux's
    protected_regular refuses O_CREAT on another user's file in a sticky world-writable folder."""
    while True:
        with contextlib.suppress(FileNotFoundError):
            return os.open(path, os.O_RDONLY)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:  # another learner created it just now
            continue
        _chmod(fd, 0o644)
        return fd


def _chmod(fd: int, mode: int) -> None:
    with contextlib.suppress(OSError):  # only the creator may; others find it already readable
        os.fchmod(fd, mode)


def _is_locked(fd: int, fcntl) -> bool:
    """Whether another open file description holds `fd`'s file exclusively (probes with a shared lock)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False
