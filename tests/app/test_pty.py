"""The real `gpu-tutor` in a real pseudo-terminal of 80x24, driven by the bytes a terminal sends.

Pilot tests call the app's own event loop; this one goes through everything a learner's terminal
goes through (the driver, the key parser, the focus after start-up), types solutions key by key as
a learner does (Enter, then the editor's own indentation; backspaces to dedent), runs them, and
reads the outcome from what the screen drew and from the learner's progress file.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")]

ENTER, BACKSPACE = "\r", "\x7f"
CTRL_E, CTRL_R, CTRL_Q, CTRL_END = "\x05", "\x12", "\x11", "\x1b[1;5F"

# As typed: no indentation of our own after an Enter, the editor keeps it; four backspaces dedent.
# The starter ends in "    pass" and a newline: ctrl+end, then five backspaces leave the indentation.
MAP_KEYS = [CTRL_END] + [BACKSPACE] * 5 + ["out[cuda.threadIdx.x] = a[cuda.threadIdx.x] + 10"]
DOT_KEYS = [CTRL_END] + [BACKSPACE] * 5 + [
    "t = cuda.threadIdx.x", ENTER,
    "cache[t] = a[i] * b[i] if i < size else 0", ENTER,
    "cuda.syncthreads()", ENTER,
    "if t == 0:", ENTER,
    "total = 0.0", ENTER,
    "for k in range(TPB):", ENTER,
    "total += cache[k]", ENTER,
] + [BACKSPACE] + ["out[0] = total"]  # Backspace in the indentation: a level back


class Terminal:
    def __init__(self, data: Path, puzzle: str, cols: int = 80, rows: int = 24):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TEXTUAL", "COLUMNS", "LINES"))}
        env.update(TERM="xterm-256color", GPU_TUTOR_DATA=str(data), GPU_TUTOR_NO_GPU="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "tutor.cli", "--puzzle", puzzle], stdin=slave,
                                     stdout=slave, stderr=slave, env=env, start_new_session=True, close_fds=True)
        os.close(slave)
        self.screen = b""

    def read(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                try:
                    self.screen += os.read(self.master, 65536)
                except OSError:
                    return

    def wait_for(self, text: str, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text.encode() in self.screen:
                return True
            self.read(0.1)
        return False

    def type(self, keys: list[str]) -> None:
        for key in keys:
            chunks = [key] if key.startswith("\x1b") or len(key) == 1 else list(key)
            for chunk in chunks:
                os.write(self.master, chunk.encode())
                self.read(0.01)
            self.read(0.05)

    def close(self) -> None:
        if self.proc.poll() is None:
            os.write(self.master, CTRL_Q.encode())
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        os.close(self.master)


def progress(data: Path) -> dict:
    return json.loads((data / "state.json").read_text())["puzzles"]


@pytest.mark.parametrize("puzzle, keys", [("map", MAP_KEYS), ("dot", DOT_KEYS)])
def test_a_learner_types_a_solution_at_80x24_runs_it_and_solves_the_puzzle(tmp_path, puzzle, keys):
    term = Terminal(tmp_path, puzzle)
    try:
        assert term.wait_for("Lesson", 30), term.screen[-2000:]
        term.read(1.0)
        term.type([CTRL_E])  # a newcomer opens on the lesson; ctrl+e goes to the code
        term.type(keys)
        term.read(1.5)  # the autosave's second
        saved = (tmp_path / "code" / f"{puzzle}.py").read_text()
        assert "FILL ME IN" in saved and "pass\n" not in saved, saved
        compile(saved, f"{puzzle}.py", "exec")  # the editor's indentation made it Python
        term.type([CTRL_R])
        assert term.wait_for("PASSED", 60), term.screen[-3000:].decode(errors="replace")
        assert progress(tmp_path)[puzzle]["solved"] is True
        assert progress(tmp_path)[puzzle]["hint_levels_used"] == 0  # no letter fired a hint
    finally:
        term.close()
