"""A served room is a hostile room, tried in headless Chromium as a participant would: a pasted
one-line default that loads the reference does not pass map, a cookie the room never issued gets
403, three learners joining a three-seat room together all get seats, and after the facilitator
restarts the room a learner's page comes back by itself, to the same folder.

Each starts from what today's main did: PASSED with an empty kernel, a folder for any cookie,
101/101/503, and 403 for every link after a restart."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from browser import Learner, launch
from room_server import RoomProcess

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[test,browser]'")

# Pasted under map's starter: on main this made the empty kernel PASS and marked map solved.
BECOME_THE_REFERENCE = ("def z(x=exec(__import__('tutor.puzzles').puzzles.load_catalog().get('map').reference"
                        ".replace('from numba import cuda', ''), globals())): pass")


def seated(learner: Learner, room: RoomProcess, name: str) -> Learner:
    """A learner who opened the room's link, gave their name and sees map's starter."""
    learner.page.goto(room.url)
    learner.wait_for("Welcome to", 60)
    learner.page.click("#terminal")
    learner.keys(name, "<Enter>")
    learner.wait_for("FILL ME IN", 30)
    return learner


def solved(folder: Path) -> bool:
    state = folder / "state.json"
    return state.exists() and json.loads(state.read_text())["puzzles"].get("map", {}).get("solved") is True


def test_a_pasted_one_line_default_does_not_pass_map_and_a_forged_cookie_gets_403(tmp_path, shots):
    room = RoomProcess(tmp_path / "room")
    try:
        with playwright_api.sync_playwright() as p:
            browser = launch(p)
            eve = seated(Learner(browser, shots, "eve"), room, "Eve")
            eve.keys("<Control+End>", BECOME_THE_REFERENCE)
            eve.page.wait_for_timeout(1500)  # the autosave's second
            mark = len(eve.screen())
            eve.keys("<Control+r>")
            eve.wait_for("FAILED", 90, since=mark)
            eve.page.wait_for_timeout(500)
            eve.shot("one-line-default")
            assert "PASSED" not in eve.screen()[mark:]
            assert "default value in" in eve.screen()[mark:]
            [folder] = room.learner_folders()
            assert BECOME_THE_REFERENCE in (folder / "code" / "map.py").read_text()  # what she typed is kept
            assert not solved(folder)

            # a cookie the room never issued, from the same browser: 403, and no folder for it
            forged = {"Cookie": f"gpu_tutor_room={room.token}; gpu_tutor_learner={'A' * 32}",
                      "Origin": room.base, "Connection": "Upgrade", "Upgrade": "websocket",
                      "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
            response = eve.context.request.get(room.base + "/ws", headers=forged)
            assert response.status == 403
            assert len(room.learner_folders()) == 1
            browser.close()
    finally:
        room.stop()


def test_three_learners_joining_a_three_seat_room_together_all_get_seats(tmp_path, shots):
    room = RoomProcess(tmp_path / "room", "--max-learners", "3")
    try:
        with playwright_api.sync_playwright() as p:
            browser = launch(p)
            learners = [Learner(browser, shots, name) for name in ("ada", "bo", "cy")]
            for learner in learners:  # together: no page waits for another's app before it asks
                learner.page.goto(room.url, wait_until="commit")
            for learner in learners:
                learner.wait_for("Welcome to", 90)
                learner.shot("seated")
            assert len(room.learner_folders()) == 3
            fourth = Learner(browser, shots, "dee")
            fourth.page.goto(room.url)
            fourth.page.wait_for_selector("body.-closed", timeout=60_000)  # the room is full
            assert "Welcome to" not in fourth.screen()
            browser.close()
    finally:
        log = room.stop()
    assert log.count("app started") == 3


def test_after_a_restart_a_learners_page_reconnects_to_the_same_folder(tmp_path, shots):
    room = RoomProcess(tmp_path / "room")
    port = room.port
    try:
        with playwright_api.sync_playwright() as p:
            browser = launch(p)
            ada = seated(Learner(browser, shots, "ada"), room, "Ada")
            ada.keys("<Control+End>", "# mine, before the restart")
            ada.page.wait_for_timeout(1500)  # the autosave's second
            [folder] = room.learner_folders()
            room.stop()  # the facilitator restarts the room: ctrl+c, then serve again
            ada.page.wait_for_selector("body.-closed", timeout=60_000)
            ada.page.wait_for_function("document.getElementById('back').textContent.includes('restarting')",
                                       timeout=30_000)
            ada.shot("restarting")
            ada.frames.clear()
            started = threading.Event()

            def serve_again():
                nonlocal room
                room = RoomProcess(tmp_path / "room", port=port)
                started.set()

            threading.Thread(target=serve_again, daemon=True).start()
            assert started.wait(90)
            ada.wait_for("# mine, before the restart", 90)  # the page came back by itself, with her code
            ada.shot("reconnected")
            assert "Welcome to" not in ada.screen()  # the same learner: her name is known
            assert room.learner_folders() == [folder]
            browser.close()
    finally:
        room.stop()
