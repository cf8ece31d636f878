"""`gpu-tutor serve` on loopback, in headless Chromium: a learner types a solution to map and sees
PASSED; a second browser session sees none of it; a request without the token is refused; the
served room with authored hints opens no socket beyond its own listener.

Screenshots go to the test's folder (printed), or to $GPU_TUTOR_SCREENSHOTS when it is set."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from browser import Learner, launch
from room_server import RoomProcess
from watch import Watch

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[test,browser]'")

MAP = "out[cuda.threadIdx.x] = a[cuda.threadIdx.x] + 10"
# The starter ends in "    pass" and a newline: ctrl+end, then five backspaces leave the indentation.
SOLVE_MAP = ["<Control+End>"] + ["<Backspace>"] * 5 + [MAP]
WORKSHOP = 'title = "Browser club"\npuzzles = ["map", "zip"]\nhints = "authored"\nask_name = true\n'


def progress(folder: Path) -> dict:
    return json.loads((folder / "state.json").read_text())["puzzles"]


def test_two_learners_in_two_browsers_one_solves_map_and_neither_sees_the_other(tmp_path, shots):
    (tmp_path / "w.toml").write_text(WORKSHOP)
    room = RoomProcess(tmp_path / "room", "--workshop", str(tmp_path / "w.toml"))
    try:
        with playwright_api.sync_playwright() as p:
            browser = launch(p)
            refused = browser.new_page()
            response = refused.goto(room.base + "/")
            assert response.status == 403 and "needs its link" in refused.content()
            refused.screenshot(path=str(shots / "no-token.png"))

            ada = Learner(browser, shots, "ada")
            ada.page.goto(room.url)
            started = ada.wait_for("Welcome to Browser club", 60)  # the app's name dialog, drawn
            assert room.token not in ada.page.url  # the link's token left the address bar
            (shots / "session-start.json").write_text(json.dumps({"first_screen_s": round(started, 2)}))
            print(f"\nbrowser session start (link to the app's first screen): {started:.2f} s")
            ada.shot("name")
            ada.page.click("#terminal")
            ada.keys("Ada", "<Enter>")
            ada.wait_for("Map", 20)
            ada.page.wait_for_timeout(500)
            ada.shot("lesson")
            ada.keys(*SOLVE_MAP)
            ada.page.wait_for_timeout(1500)  # the autosave's second
            mark = len(ada.screen())
            ada.keys("<Control+r>")
            ada.wait_for("PASSED", 90, since=mark)
            ada.page.wait_for_timeout(500)
            ada.shot("passed")
            [folder] = room.learner_folders()
            assert progress(folder)["map"]["solved"] is True
            assert MAP in (folder / "code" / "map.py").read_text()
            assert json.loads((folder / "learner.json").read_text())["name"] == "Ada"

            bo = Learner(browser, shots, "bo")
            bo.page.goto(room.url)
            bo.wait_for("Welcome to Browser club", 60)  # asked again: another learner
            bo.page.click("#terminal")
            bo.keys("Bo", "<Enter>")
            bo.wait_for("FILL ME IN", 20)
            bo.page.wait_for_timeout(500)
            bo.shot("own-starter")
            assert MAP not in bo.screen() and "PASSED" not in bo.screen() and "1/2 solved" not in bo.screen()
            folders = room.learner_folders()
            assert len(folders) == 2
            [bo_folder] = [f for f in folders if f != folder]
            assert not (bo_folder / "state.json").exists() or not progress(bo_folder).get("map", {}).get("solved")

            # Bo's kernel reaches for Ada's code: refused as it is built, before it runs, and never opened
            ada_code = folder / "code" / "map.py"
            watch = Watch(ada_code)
            try:
                bo.keys("<Control+End>", *["<Backspace>"] * 5, f"out[0] = len(open({str(ada_code)!r}).read())")
                mark = len(bo.screen())
                bo.keys("<Control+r>")
                bo.wait_for("FAILED", 90, since=mark)
                bo.page.wait_for_timeout(500)
                bo.shot("reads-another-learner")
                assert "not part of a kernel" in bo.screen()[mark:] and "open" in bo.screen()[mark:]
                assert not watch.touched(), "Bo's kernel opened Ada's code"
            finally:
                watch.close()
            assert progress(bo_folder)["map"]["solved"] is False

            # Ada reloads: the same folder, her code, no second name dialog
            ada.frames.clear()
            ada.page.reload()
            ada.wait_for("a[cuda.threadIdx.x] + 10", 60)
            assert "Welcome to" not in ada.screen()
            assert len(room.learner_folders()) == 2
            ada.shot("after-reload")
            browser.close()
    finally:
        log = room.stop()
    assert "refused" in log and "no room token" in log


SITECUSTOMIZE = """
import atexit, json, os, socket, sys
_seen = {"connect": [], "lookup": [], "bind": []}
_connect, _connect_ex, _bind, _lookup = socket.socket.connect, socket.socket.connect_ex, socket.socket.bind, socket.getaddrinfo
def _note(kind, what):
    _seen[kind].append(repr(what)[:120])
def connect(self, address):
    if self.family != socket.AF_UNIX:
        _note("connect", address)
    return _connect(self, address)
def connect_ex(self, address):
    if self.family != socket.AF_UNIX:
        _note("connect", address)
    return _connect_ex(self, address)
def bind(self, address):
    if self.family != socket.AF_UNIX:
        _note("bind", address)
    return _bind(self, address)
def getaddrinfo(host, *args, **kwargs):
    _note("lookup", host)
    return _lookup(host, *args, **kwargs)
socket.socket.connect, socket.socket.connect_ex, socket.socket.bind, socket.getaddrinfo = connect, connect_ex, bind, getaddrinfo
@atexit.register
def _report():
    folder = os.environ.get("OFFLINE_REPORT")
    if folder:
        with open(os.path.join(folder, f"{os.getpid()}.json"), "w") as f:
            json.dump({"argv": sys.argv, "litellm": "litellm" in sys.modules, **_seen}, f)
"""


def test_a_served_room_with_authored_hints_opens_no_socket_beyond_its_own_listener(tmp_path, shots):
    site, report = tmp_path / "site", tmp_path / "report"
    site.mkdir()
    report.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    (tmp_path / "w.toml").write_text(WORKSHOP)
    (tmp_path / "config.toml").write_text('[ai]\nmodel = "openai/gpt-4o-mini"\n')  # the facilitator's own
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "OFFLINE_REPORT": str(report), "GPU_TUTOR_CONFIG": str(tmp_path / "config.toml")}
    room = RoomProcess(tmp_path / "room", "--workshop", str(tmp_path / "w.toml"), env=env)
    try:
        with playwright_api.sync_playwright() as p:
            browser = launch(p)
            cy = Learner(browser, shots, "offline")
            cy.page.goto(room.url)
            cy.wait_for("Welcome to Browser club", 60)
            cy.page.click("#terminal")
            cy.keys("Cy", "<Enter>")
            cy.wait_for("Map", 20)
            mark = len(cy.screen())
            cy.keys("<F7>")  # a hint: the authored one, with no model and no network
            cy.wait_for("Hint 1", 30, since=mark)
            mark = len(cy.screen())
            cy.keys("<Control+r>")  # the starter, run: FAILED, through the sandboxed simulator
            cy.wait_for("FAILED", 90, since=mark)
            cy.shot("hint-and-run")
            cy.keys("<Control+End>", "# typed a moment before the room stopped")
            cy.page.wait_for_timeout(300)  # under the autosave's second: stopping the room saves it
            room.stop()
            [folder] = room.learner_folders()
            assert "# typed a moment before the room stopped" in (folder / "code" / "map.py").read_text()
            browser.close()
    finally:
        room.stop()
    records = [json.loads(p.read_text()) for p in report.glob("*.json")]
    server = [r for r in records if "serve" in r["argv"]]
    apps = [r for r in records if r["argv"][0].endswith(os.path.join("serve", "session.py"))]
    assert len(server) == 1 and apps, [r["argv"] for r in records]
    assert server[0]["bind"] and all(f"'127.0.0.1', {room.port}" in b for b in server[0]["bind"])
    for record in records:
        assert record["connect"] == [], record
        assert set(record["lookup"]) <= {"'127.0.0.1'"}, record
        assert record["litellm"] is False, record
        if record not in server:
            assert record["bind"] == [], record
    shutil.rmtree(report)


def test_a_served_learner_turns_watch_on_with_the_browser_safe_key_and_stays_on_the_page(tmp_path, shots):
    """ctrl+w, the terminal's watch key, closes a browser tab: served, watch is ctrl+o, and the next
    puzzle F10 (ctrl+n opens a window); the footer says so and names no key the browser keeps."""
    (tmp_path / "w.toml").write_text('title = "Keys club"\npuzzles = ["map", "zip"]\nhints = "authored"\n')
    room = RoomProcess(tmp_path / "room", "--workshop", str(tmp_path / "w.toml"))
    try:
        with playwright_api.sync_playwright() as p:
            browser = launch(p)
            ada = Learner(browser, shots, "keys")
            ada.page.goto(room.url)
            ada.wait_for("your name", 60)  # a served room asks it once
            ada.page.click("#terminal")
            ada.keys("Ada", "<Enter>")
            mark = len(ada.screen())
            ada.wait_for("Watch", 30, since=mark)
            ada.page.wait_for_timeout(500)
            footer = ada.screen()[mark:]
            assert "^o" in footer and "^w" not in footer and "^n" not in footer
            mark = len(ada.screen())
            ada.keys("<Control+o>")
            ada.wait_for("watch on", 20, since=mark)
            assert not ada.page.is_closed() and len(ada.context.pages) == 1
            mark = len(ada.screen())
            ada.keys("<F10>")
            ada.wait_for("2/2", 20, since=mark)
            ada.shot("watch-and-next")
            assert not ada.page.is_closed() and len(ada.context.pages) == 1
            browser.close()
    finally:
        room.stop()
