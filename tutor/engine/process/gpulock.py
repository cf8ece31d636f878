"""GPU runs from many learners' processes on one server take turns, first come first served.

Thirty learners sharing one GPU over SSH each run their own app, and each app has its own warm GPU
child. If they all compiled and launched at once, every run would crawl and a few would run out of
GPU memory. So a GPU run first takes its turn through a lock file in a folder every learner can
write (`GPU_TUTOR_GPU_QUEUE`, by default `gpu-tutor-gpu-queue` in the system's temporary folder):

    QUEUE/gpu.lock                    flock'd exclusively by a process whose run is on the GPU
    QUEUE/gpu.lock.1 ... gpu.lock.N   the further turns, where the GPU has room for N+1 runs at once
    QUEUE/<time>-<pid>-<tag>.ticket   one per process waiting, flock'd by its owner while it waits

A big GPU and small kernels leave room for several runs at once, so a queue has `turns` lock files,
each a turn (`GPU_TUTOR_GPU_TURNS`, 1 to 16; a workshop file's `gpu_turns` sets it). The room's default
is DEFAULT_TURNS, 4: with one turn, a learner's endless kernel held the whole room for its 5 s limit,
and thirty learners on an H100 waited 5.5 s (p95) for a verdict; with four, 0.3 s, and no one
waited more than 0.3 s for a turn (bench/results/room.md). A GpuQueue made without `turns` has one
turn, a plain lock. With one turn there is only `gpu.lock`, as before turns could be more, so older
processes share the queue.

The locks are `fcntl.flock`, which the kernel releases when a holder exits or is killed, so a
crashed learner never wedges the queue. The tickets give the order (their names sort by the time
they were taken): a waiter takes a free turn only while fewer live tickets are ahead of it than
there are free turns, so a turn that frees up goes to the oldest waiter and nobody jumps the queue.
A waiting learner sees "waiting for GPU (n ahead)", n being how many turns must end before theirs
begins: each waiter ahead and the learner need a turn, so of the turns held now, ahead + held + 1 -
turns must end first (with one turn: the holder plus the waiters ahead). A ticket whose owner died
is no longer locked; whoever notices removes it. A ticket is locked before it gets its visible name,
so no one mistakes a new ticket for a dead one.

Every learner's process must count the same turns: set the variable the same for every session, or
let the workshop file set it. Processes that disagree still never put more runs on the GPU than the
largest count among them (each run holds one of the first that many lock files), but the order is
fair only among equals: a process counting more turns may start before one counting fewer that came
first, which waits for its own few lock files only. Turns are taken from the last file down, so
`gpu.lock`, the one file a one-turn process knows, is the last one taken.

Keep the folder on a local disk (flock over NFS is not to be trusted). Where `fcntl` does not exist
(Windows) or the variable says `off`, runs do not queue. The simulator never queues: it runs on the
CPU cores of each learner's own process.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

QUEUE_ENV = "GPU_TUTOR_GPU_QUEUE"
TURNS_ENV = "GPU_TUTOR_GPU_TURNS"
MAX_TURNS = 16
DEFAULT_TURNS = 4
LOCK_NAME = "gpu.lock"
TICKET_SUFFIX = ".ticket"
POLL_S = 0.1


class QueueCancelled(Exception):
    """The caller gave up its place (a newer run replaced this one)."""


class GpuQueue:
    """First-come-first-served turns on the GPU, `turns` at once, shared by every process that names
    `folder` (and counts the same turns)."""

    def __init__(self, folder: str | Path, *, turns: int = 1, poll_s: float = POLL_S) -> None:
        if isinstance(turns, bool) or not isinstance(turns, int) or not 1 <= turns <= MAX_TURNS:
            raise ValueError(f"turns must be a whole number from 1 to {MAX_TURNS}, not {turns!r}")
        self.folder = Path(folder)
        self.turns = turns
        self.poll_s = poll_s
        self.notice: str | None = None  # why the turns are not what the environment asked for

    @contextlib.contextmanager
    def turn(self, on_wait: Callable[[int], object] | None = None,
             cancelled: Callable[[], bool] | None = None) -> Iterator[None]:
        """Hold a turn on the GPU for the body of the `with`. While others are ahead, `on_wait(n)` is
        called each time the number ahead changes; raises QueueCancelled as soon as `cancelled()` is true."""
        import fcntl

        self._prepare_folder()
        lock_fds: list[int] = []
        try:
            for slot in range(self.turns):
                lock_fds.append(_open_shared(self.folder / lock_name(slot)))
            slot = self._wait_for_turn(lock_fds, on_wait, cancelled)
            try:
                yield
            finally:
                fcntl.flock(lock_fds[slot], fcntl.LOCK_UN)
        finally:
            for fd in lock_fds:
                os.close(fd)

    def waiting(self) -> int:
        """How many processes are waiting now (live tickets), not counting the holders."""
        return len(self._live_tickets())

    def holders(self) -> int:
        """How many of this queue's turns are held now."""
        import fcntl

        held = 0
        for slot in range(self.turns):
            path = self.folder / lock_name(slot)
            if not path.exists():  # never taken: asking must not create it
                continue
            fd = _open_shared(path)
            try:
                held += _is_locked(fd, fcntl)
            finally:
                os.close(fd)
        return held

    def held(self) -> bool:
        """Whether some process holds a turn now (kept from when there was one turn)."""
        return self.holders() > 0

    # -- the waiting ------------------------------------------------------------------------------
    def _wait_for_turn(self, lock_fds: list[int], on_wait, cancelled) -> int:
        """The slot we now hold, once fewer live tickets are ahead of ours than turns are free."""
        import fcntl

        ticket_fd, ticket = self._take_ticket()
        try:
            shown = None
            while True:
                if cancelled is not None and cancelled():
                    raise QueueCancelled()
                # Tickets before locks: a ticket goes only once its owner holds a turn, so one that
                # goes between the two looks both ahead and holding, never neither.
                ahead = sum(t < ticket for t in self._live_tickets())
                if not ahead:
                    slot = _take_free(lock_fds, range(len(lock_fds)), fcntl)
                    if slot is not None:
                        return slot
                    held = self.turns  # all taken (or being looked at by a waiter that very moment)
                else:
                    free = [s for s, fd in enumerate(lock_fds) if not _is_locked(fd, fcntl)]
                    if ahead < len(free):  # room for everyone ahead of us, and for us
                        slot = _take_free(lock_fds, free[-1:], fcntl)
                        if slot is not None:
                            return slot
                    held = self.turns - len(free)
                n = ahead + held - self.turns + 1
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


def shared_queue(turns: int | None = None, folder: str | None = None, notice: str | None = None) -> GpuQueue | None:
    """The queue every gpu-tutor process on this machine shares (None: runs do not queue): in
    `folder` (the session's GPU_TUTOR_GPU_QUEUE; None: the machine's default; "off": no queue), with
    `turns` turns (None: DEFAULT_TURNS). `notice`: why the session's turns are not what was asked."""
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return None
    named = (folder or "").strip()
    if named.lower() in ("off", "none", "0"):
        return None
    if turns is None:
        turns = DEFAULT_TURNS
    queue = GpuQueue(Path(named).expanduser() if named else Path(tempfile.gettempdir()) / "gpu-tutor-gpu-queue",
                     turns=turns)
    queue.notice = notice
    if notice is not None:
        _say_once(notice)
    return queue


def turns_from_env(environ=None) -> tuple[int, str | None]:
    """How many turns GPU_TUTOR_GPU_TURNS asks for (DEFAULT_TURNS where it is unset), and a notice when
    it asks for something else than a whole number from 1 to 16. A bad value means one turn rather than
    an error: the variable is read when a learner's app first runs on the GPU, where an error would
    close their app mid-session, and one turn is the side that never puts more runs on the GPU than
    the room meant to."""
    raw = ({} if environ is None else environ).get(TURNS_ENV, "").strip()
    if not raw:
        return DEFAULT_TURNS, None
    if re.fullmatch(r"[0-9]{1,3}", raw) and 1 <= int(raw) <= MAX_TURNS:
        return int(raw), None
    return 1, turns_notice(raw)


def turns_notice(raw: str) -> str:
    return (f"{TURNS_ENV}={raw!r} is not a whole number from 1 to {MAX_TURNS}; GPU runs take one turn at a "
            f"time (set it the same for every learner, e.g. {TURNS_ENV}=2)")


def waiting_text(ahead: int) -> str:
    return f"waiting for GPU ({ahead} ahead)"


def lock_name(slot: int) -> str:
    """The lock file of turn `slot`: the first keeps the name it had when there was one turn."""
    return LOCK_NAME if slot == 0 else f"{LOCK_NAME}.{slot}"


_said: set[str] = set()


def _say_once(notice: str) -> None:
    """On stderr once per process: the CLI shows it, and the app (which owns the terminal) keeps the
    notice on the queue for whoever asks (`gpu-tutor workshop check` prints it)."""
    if notice not in _said:
        _said.add(notice)
        with contextlib.suppress(OSError, ValueError):
            print(f"gpu-tutor: {notice.encode('ascii', 'backslashreplace').decode()}", file=sys.stderr)


def _take_free(lock_fds: list[int], slots, fcntl) -> int | None:
    """Take the last of `slots` that is free (turns go from the last file down), or None."""
    for slot in reversed(slots):
        try:
            fcntl.flock(lock_fds[slot], fcntl.LOCK_EX | fcntl.LOCK_NB)
            return slot
        except BlockingIOError:
            continue
    return None


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
