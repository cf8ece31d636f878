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
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def get(url: str, cookie: str | None = None):
    """(status, headers, body) of one request, redirects not followed."""
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def cookies_of(headers) -> dict[str, str]:
    found = {}
    for line in headers.get_all("Set-Cookie") or []:
        name, value = line.split(";", 1)[0].split("=", 1)
        found[name] = value
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RoomProcess:
    """`gpu-tutor serve` on a free loopback port; `.url` is the link it printed, `.token` its token;
    `.view_url` and `.view_token` the facilitator's."""

    def __init__(self, data: Path, *args: str, env: dict | None = None, prefix: list[str] = (), port: int | None = None):
        self.port = port or free_port()
        self.data = data
        full_env = {**os.environ, "GPU_TUTOR_NO_GPU": "1", **(env or {})}
        full_env.pop("GPU_TUTOR_WORKSHOP", None)
        self.proc = subprocess.Popen([*prefix, sys.executable, "-m", "tutor.cli", "serve", "--port", str(self.port),
                                      "--data", str(data), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     env=full_env, cwd=ROOT, start_new_session=True, text=True)
        self.output: list[str] = []
        self.url = self.token = self.view_url = self.view_token = None
        reader = threading.Thread(target=self._read, daemon=True)
        reader.start()
        deadline = time.monotonic() + 60
        while self.url is None or self.view_url is None:
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
            found = re.search(r"(http://127\.0\.0\.1:\d+/facilitator\?token=([A-Za-z0-9_-]+))", line)
            if found:
                self.view_url, self.view_token = found.group(1), found.group(2)

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

    def app_processes(self, module: str) -> list[int]:
        """This room's live app processes running `module` (tutor.serve.session: learners' apps;
        tutor.serve.facilitator_session: room views), not the shells that start them."""
        found = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    command = open(f"/proc/{pid}/cmdline", "rb").read()
                    if module.encode() in command.split(b"\0") and b"/bin/sh" not in command[:12]:
                        stat = open(f"/proc/{pid}/stat").read()
                        if stat[stat.rfind(")") + 2:].split()[0] not in ("Z", "X") and _descends(int(pid), self.proc.pid):
                            found.append(int(pid))
                except OSError:
                    pass
        return found

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return "".join(self.output)


def _descends(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            return False
        pid = int(stat[stat.rfind(")") + 2:].split()[1])
    return False
