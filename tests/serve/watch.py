"""inotify on one file: did any process open or read it? (Linux.) A refused open leaves no event."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

IN_ACCESS, IN_OPEN = 0x1, 0x20


class Watch:
    """Every open or read of one file, from any process, from now on."""

    def __init__(self, path: Path):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK)
        assert self.fd >= 0 and self.libc.inotify_add_watch(self.fd, str(path).encode(), IN_OPEN | IN_ACCESS) >= 0

    def touched(self) -> bool:
        try:
            return len(os.read(self.fd, 4096)) > 0
        except BlockingIOError:
            return False

    def close(self):
        os.close(self.fd)
