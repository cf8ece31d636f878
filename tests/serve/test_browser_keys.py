"""Every key a served learner is told of (the app's served bindings, the thread pane's and the
counters') leaves Chromium as bytes the app reads as that very key.

Headless Chromium driven by Playwright hands every key to the page, ctrl+w included: it cannot show
a browser keeping a key for itself (Chromium keeps only its tab and window keys, ctrl+n, ctrl+t,
ctrl+w and their shifted forms, which the served keys leave out: test_keys.py). What it shows is
the rest of the road: the page's terminal turns each key into bytes, and Textual's parser must read
them back as the key the app binds (a terminal sends ctrl+h as backspace, ctrl+i as tab, ctrl+m as
enter: such a key would be advertised and never arrive). Guard: passes on 9180b27, as it should."""

from __future__ import annotations

import json

import pytest

from browser import Learner, launch
from room_server import RoomProcess

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[test,browser]'")

# Textual's key names as Playwright presses them, where they differ beyond ctrl+ and F-keys
PRESSED = {"escape": "Escape", "enter": "Enter", "space": "Space", "tab": "Tab", "up": "ArrowUp",
           "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight", "pageup": "PageUp",
           "pagedown": "PageDown", "home": "Home", "end": "End", "comma": ",", "full_stop": ".", "slash": "/",
           "left_square_bracket": "[", "right_square_bracket": "]"}


def served_keys() -> list[str]:
    from tutor.app.keys import bindings
    from tutor.app.widgets.counters_view import LineList
    from tutor.app.widgets.grid import ThreadGrid
    from tutor.app.widgets.thread_pane import ThreadPane

    keys = [b.key for b in bindings(served=True)]
    for widget in (ThreadPane, ThreadGrid, LineList):
        keys += [key for b in widget.BINDINGS for key in b.key.split(",")]
    return list(dict.fromkeys(keys + ["ctrl+p", "enter"]))  # the palette (F1 names it), Enter on a failure


def pressed(key: str) -> str:
    return "+".join("Control" if part == "ctrl" else PRESSED.get(part, part.upper() if part[:1] == "f" and
                                                                  part[1:].isdigit() else part)
                    for part in key.split("+"))


def read_as(data: str) -> list[str]:
    """The keys Textual's terminal parser reads from `data` (as the served app's driver does)."""
    from textual._xterm_parser import XTermParser

    parser = XTermParser()
    return [event.key for event in [*parser.feed(data), *parser.feed("")] if hasattr(event, "key")]


def test_every_key_a_served_learner_is_told_of_arrives_from_chromium_as_that_key(tmp_path, shots):
    (tmp_path / "w.toml").write_text('title = "Keys club"\npuzzles = ["map", "zip"]\nhints = "authored"\n')
    room = RoomProcess(tmp_path / "room", "--workshop", str(tmp_path / "w.toml"))
    try:
        with playwright_api.sync_playwright() as p:
            browser = launch(p)
            ada = Learner(browser, shots, "every-key")
            sent: list[str] = []
            ada.page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.append(f)))
            ada.page.goto(room.url)
            ada.wait_for("your name", 60)
            ada.page.click("#terminal")
            ada.keys("Ada", "<Enter>")
            ada.wait_for("Watch", 30)
            wrong = {}
            for key in served_keys():
                if key == "ctrl+q":
                    continue  # it ends the app; its bytes are those of any ctrl+letter
                start = len(sent)
                ada.page.keyboard.press(pressed(key))
                ada.page.wait_for_timeout(150)
                data = "".join(json.loads(f)[1] for f in sent[start:] if isinstance(f, str) and f.startswith('["stdin"'))
                if read_as(data) != [key]:
                    wrong[key] = (data, read_as(data))
                ada.page.keyboard.press("Escape")  # F1, F2, F9 and ctrl+p open a dialog: closed again
                ada.page.wait_for_timeout(100)
            assert not wrong, wrong
            assert not ada.page.is_closed() and len(ada.context.pages) == 1
            browser.close()
    finally:
        room.stop()
