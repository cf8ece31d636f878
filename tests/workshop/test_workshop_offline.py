"""Offline by construction: the real `gpu-tutor --workshop FILE` in a terminal, with no network.

The learner's own settings name a hosted model, to show that the workshop's file wins. The command
runs in a pseudo-terminal inside a network namespace without network where `unshare -rn` works,
and in every case with a sitecustomize that makes the app's process refuse and record any connection
or name lookup and say at exit whether litellm was imported (the engine's children are sandboxed
with no network at all). The learner asks for a hint: the authored one is recorded, and nothing touched a socket.
"""

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

from netless import no_network_prefix

ROOT = Path(__file__).resolve().parents[2]

SITECUSTOMIZE = """
import atexit, json, os, socket, sys
_tried = []
def _refuse(*args, **kwargs):
    _tried.append(repr(args)[:120])
    raise OSError("no network in this test")
socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.getaddrinfo = _refuse
socket.create_connection = _refuse
@atexit.register
def _report():
    with open(os.path.join(os.environ["OFFLINE_REPORT"], f"{os.getpid()}.json"), "w") as f:
        json.dump({"argv": sys.argv, "litellm": "litellm" in sys.modules, "tried": _tried}, f)
"""


def test_the_workshop_app_opens_no_socket_and_never_imports_litellm(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    (tmp_path / "report").mkdir()
    (tmp_path / "config.toml").write_text('[ai]\nmodel = "openai/gpt-4o-mini"\n')  # the learner's own
    workshop = tmp_path / "w.toml"
    workshop.write_text('title = "Offline room"\npuzzles = ["zip", "map"]\nhints = "authored"\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)]),
           "OFFLINE_REPORT": str(tmp_path / "report"), "GPU_TUTOR_DATA": str(tmp_path / "data"),
           "GPU_TUTOR_CONFIG": str(tmp_path / "config.toml"), "GPU_TUTOR_NO_GPU": "1", "TERM": "xterm-256color",
           "COLUMNS": "120", "LINES": "40"}
    env.pop("GPU_TUTOR_WORKSHOP", None)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    app = subprocess.Popen([*no_network_prefix(), sys.executable, "-m", "tutor.cli", "--workshop", str(workshop)],
                           stdin=slave, stdout=slave, stderr=slave, env=env, cwd=tmp_path, start_new_session=True)
    os.close(slave)
    screen = bytearray()

    def drain():
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            screen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while b"Offline room" not in screen:  # the workshop's title in the header
            assert app.poll() is None, f"the app exited: {bytes(screen[-2000:])!r}"
            assert time.monotonic() < deadline, f"the app never painted its title: {bytes(screen[-2000:])!r}"
            time.sleep(0.1)
        # kept: a real terminal's bytes show painted cells only, with no sign that the app takes keys
        # yet; the pilot tests (tests/app) wait on that state, this one gives the app a second
        time.sleep(1.0)
        os.write(master, b"\x1b[18~")  # F7, the hint key, as a real terminal sends it
        state = tmp_path / "data" / "state.json"
        deadline = time.monotonic() + 30
        while not (state.exists() and json.loads(state.read_text())["puzzles"].get("zip", {}).get("hint_levels_used")):
            assert time.monotonic() < deadline, "the hint was never recorded"
            time.sleep(0.1)
        os.write(master, b"\x11")  # ctrl+q
        app.wait(timeout=30)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        os.close(master)
    progress = json.loads((tmp_path / "data" / "state.json").read_text())["puzzles"]["zip"]
    assert progress["hint_levels_used"] == 1 and progress["ai_hints_used"] == 0
    reports = [json.loads(p.read_text()) for p in (tmp_path / "report").glob("*.json")]
    main_py = os.path.join("cli", "__main__.py")  # `python -m tutor.cli` runs tutor/cli/__main__.py
    assert any("tutor.cli" in " ".join(r["argv"]) or r["argv"][0].endswith(main_py) for r in reports), reports
    # The engine's children start through the sandbox: a cleared environment (so not this test's
    # OFFLINE_REPORT), no writes outside their own folder, and no socket but a Unix one, which
    # tests/engine/test_sandbox.py proves from inside; only the app's own process reports here.
    assert all(not r["litellm"] for r in reports), reports
    assert all(not r["tried"] for r in reports), reports
