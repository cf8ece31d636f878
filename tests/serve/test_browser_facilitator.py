"""The facilitator's room view in headless Chromium: the facilitator's link opens the live grid of
the served room's learners (the fixture room of 30, tests/workshop/room_fixture.py, as the room's
DATA); a learner's link and cookies do not open it, and watching the room makes no learner.

Screenshots go to the test's folder (printed), or to $GPU_TUTOR_SCREENSHOTS when it is set."""

from __future__ import annotations

import json

import pytest

from browser import Learner, launch
from room_server import RoomProcess
from tests.workshop.room_fixture import PUZZLES, TITLE, build_room

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[test,browser]'")


def test_the_facilitators_link_opens_the_room_view_and_a_learners_does_not(tmp_path, shots):
    data = build_room(tmp_path / "room")
    (tmp_path / "w.toml").write_text(f"title = {json.dumps(TITLE)}\npuzzles = {json.dumps(PUZZLES)}\n")
    room = RoomProcess(data, "--workshop", str(tmp_path / "w.toml"))  # the room's file stays the fixture's
    try:
        with playwright_api.sync_playwright() as p:
            browser = launch(p)
            learner = Learner(browser, shots, "learner-at-the-view")
            response = learner.page.goto(f"{room.base}/facilitator?token={room.token}")
            assert response.status == 403 and "This page is the facilitator's" in learner.page.content()
            learner.page.goto(room.url)  # a learner in the room, with the room's cookies...
            learner.wait_for("your name", 60)  # its app asks the name
            response = learner.page.goto(room.base + "/facilitator")  # ...and the view's address
            assert response.status == 403 and "This page is the facilitator's" in learner.page.content()
            learner.shot("refused")
            learner.close()
            folders = room.learner_folders()

            view = Learner(browser, shots, "facilitator")
            view.page.goto(room.view_url)
            assert room.view_token not in view.page.url and view.page.url.endswith("/facilitator")
            view.wait_for("Learner 01", 60)  # the grid, drawn from the learners' folders
            view.wait_for("Learner 12", 10)
            for puzzle in PUZZLES:
                assert puzzle in view.screen()
            view.page.wait_for_timeout(500)
            view.shot("room-view")
            assert room.learner_folders() == folders  # watching the room made no learner
            browser.close()
    finally:
        log = room.stop()
    assert "room view: started" in log and "the learners' token, not the facilitator's" in log
