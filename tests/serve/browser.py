"""A learner in headless Chromium (Debian's package), driven by Playwright, reading the app's screen.

The terminal in the page draws on a canvas, so the screen is read from what the app sends down the
websocket, the same bytes the page draws, with the terminal's escape codes taken out."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
_ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78]")


def chromium_path() -> str:
    path = os.environ.get("GPU_TUTOR_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("the browser tests need Chromium: apt-get install chromium (as .ci/run does), or set "
                    "GPU_TUTOR_CHROMIUM to its path")
    return path


def launch(playwright):
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)


class Learner:
    """One browser session (a context of its own: its own cookies) on one page."""

    def __init__(self, browser, shots: Path, name: str):
        self.context = browser.new_context(viewport={"width": 1400, "height": 900})
        self.page = self.context.new_page()
        self.shots, self.name = shots, name
        self.frames: list[str] = []
        self.page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload) -> None:
        self.frames.append(payload if isinstance(payload, str) else payload.decode("utf-8", "replace"))

    def screen(self) -> str:
        return _ESCAPES.sub("", "".join(self.frames))

    def wait_for(self, text: str, timeout: float, since: int = 0) -> float:
        """Seconds until `text` is drawn (after the first `since` characters of the screen)."""
        start = time.monotonic()
        while text not in self.screen()[since:]:
            if time.monotonic() - start > timeout:
                self.shot("timed-out")
                raise AssertionError(f"{self.name}: {text!r} never drawn in {timeout} s; the screen's end:\n"
                                     + self.screen()[-3000:])
            self.page.wait_for_timeout(100)
        return time.monotonic() - start

    def keys(self, *keys: str) -> None:
        for key in keys:
            if key.startswith("<") and key.endswith(">"):
                self.page.keyboard.press(key[1:-1])
            else:
                self.page.keyboard.type(key, delay=15)
            self.page.wait_for_timeout(60)

    def shot(self, what: str) -> Path:
        path = self.shots / f"{self.name}-{what}.png"
        self.page.screenshot(path=str(path))
        return path

    def close(self) -> None:
        self.context.close()
