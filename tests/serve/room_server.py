"""The real `gpu-tutor serve` in its own process, for the tests that talk to it over loopback."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RoomProcess:
    """`gpu-tutor serve` on a free loopback port; `.url` is the link it printed, `.token` its token."""

    def __init__(self, data: Path, *args: str, env: dict | None = None, prefix: list[str] = (), port: int | None = None):
        self.port = port or free_port()
        self.data = data
        full_env = {**os.environ, "GPU_TUTOR_NO_GPU": "1", **(env or {})}
        full_env.pop("GPU_TUTOR_WORKSHOP", None)
        self.proc = subprocess.Popen([*prefix, sys.executable, "-m", "tutor.cli", "serve", "--port", str(self.port),
                                      "--data", str(data), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     env=full_env, cwd=ROOT, start_new_session=True, text=True)
        self.output: list[str] = []
        self.url = self.token = None
        reader = threading.Thread(target=self._read, daemon=True)
        reader.start()
        deadline = time.monotonic() + 60
        while self.url is None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError("gpu-tutor serve did not start:\n" + "".join(self.output))
            time.sleep(0.05)
        self._wait_listening(deadline)

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.output.append(line)
            found = re.search(r"(http://127\.0\.0\.1:\d+/\?token=([A-Za-z0-9_-]+))", line)
            if found:
                self.url, self.token = found.group(1), found.group(2)

    def _wait_listening(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("gpu-tutor serve never listened:\n" + "".join(self.output))

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def learner_folders(self) -> list[Path]:
        return sorted(p for p in (self.data / "learners").iterdir() if p.is_dir())

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return "".join(self.output)
