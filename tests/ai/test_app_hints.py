"""The app's hint key with a model (a scripted provider through litellm), and without one offline."""

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from netless import no_network_prefix
from scripted_llm import register
from textual.widgets import Markdown, Static

from tutor.ai.config import AISettings
from tutor.app.app import make_app
from tutor.app.widgets.hints import HintsPanel
from waiting import until
from warm_runners import app_runner

ROOT = Path(__file__).resolve().parents[2]
WRONG = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = a[i]\n"


def run_app(coro, tmp_path, settings):
    async def main():
        app = make_app(data_dir=tmp_path, backend="sim", seed=1, ai_settings=settings, runner=app_runner())
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await coro(app, pilot)

    asyncio.run(main())


async def hint_done(app, pilot, timeout=60):
    """The hint asked for (the key began it, the panel streaming) has come, and the panel shows it."""
    panel = app.query_one(HintsPanel)
    await until(pilot, lambda: not panel.streaming, timeout, "the hint to finish")
    await app.workers.wait_for_complete()
    await pilot.pause()
    return panel


def panel_text(panel):
    title = str(panel.query_one("#hints-title", Static).render())
    found = panel.query("#hints-text")
    body = found.first(Markdown).source if found else ""
    return title, body


def test_an_ai_hint_streams_into_the_panel_and_is_recorded(tmp_path):
    register(["Look at your line 7: what happens to each value before you store it?"])

    async def check(app, pilot):
        app.query_one("#editor").load_text(WRONG)
        await pilot.press("f7")
        panel = await hint_done(app, pilot)
        title, body = panel_text(panel)
        assert "Hint 1 (AI · a nudge)" in body and "what happens to each value" in body
        assert "tokens" in title and "$" in title
        progress = app.store.progress("map")
        assert progress.ai_hints_used == 1 and progress.hint_levels_used == 1

    run_app(check, tmp_path, AISettings(model="scripted/tutor"))


def test_a_hint_that_leaks_is_replaced_by_the_authored_one_with_a_note(tmp_path, catalog):
    leak = "Write:\n```python\nj = cuda.threadIdx.x\nout[j] = a[j] + 10\n```"
    register([leak, leak, leak])

    async def check(app, pilot):
        app.query_one("#editor").load_text(WRONG)
        await pilot.press("f7")
        panel = await hint_done(app, pilot)
        title, body = panel_text(panel)
        assert catalog.get("map").hints[0] in body and "out[j]" not in body
        assert "gave the answer away 3 time(s)" in title
        assert app.store.progress("map").ai_hints_used == 0

    run_app(check, tmp_path, AISettings(model="scripted/tutor"))


# Escaped today's main: a hint indented four spaces streamed into the panel word by word (only
# backtick fences were held back) before the guard withheld it.
def test_no_word_of_a_reply_shows_in_the_panel_before_the_guard_has_judged_it(tmp_path):
    leak = "Here it is:\n\n    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n\nThat is all."
    register([("slow", 0.05, leak), "What must you add to each value?"])

    async def check(app, pilot):
        app.query_one("#editor").load_text(WRONG)
        await pilot.press("f7")
        panel = app.query_one(HintsPanel)
        seen_titles, seen_bodies = [], []

        def look() -> bool:  # what the panel shows at each turn of the app's loop while it streams
            title, body = panel_text(panel)
            seen_titles.append(title)
            seen_bodies.append(body)
            return not panel.streaming

        await until(pilot, look, what="the hint to finish")
        await hint_done(app, pilot)
        assert not any("+ 10" in b or "Here it is" in b or "That is all" in b for b in seen_bodies)
        assert any("characters so far, shown once checked" in t for t in seen_titles)
        assert "What must you add to each value?" in panel_text(panel)[1]

    run_app(check, tmp_path, AISettings(model="scripted/tutor"))


def test_the_next_request_lists_the_hints_the_learner_saw_ai_ones_included(tmp_path, catalog):
    first = "Look at your line 7: what happens to each value before you store it?"
    provider = register([first, "Which constant does the lesson add?"])

    async def check(app, pilot):
        app.query_one("#editor").load_text(WRONG)
        await pilot.press("f7")
        await hint_done(app, pilot)
        await pilot.press("f7")
        await hint_done(app, pilot)
        sent = provider.calls[1][1]["content"]
        shown = sent.split("## Hints already shown", 1)[1].split("## Write hint level 2", 1)[0]
        assert first in shown  # the AI hint the learner read
        assert catalog.get("map").hints[0] not in shown  # not the authored one it stood in for

    run_app(check, tmp_path, AISettings(model="scripted/tutor"))


def test_escape_cancels_a_slow_hint(tmp_path):
    register([("slow", 0.3, "word " * 60)])

    async def check(app, pilot):
        await pilot.press("f7")
        panel = app.query_one(HintsPanel)
        # a word of the slow reply has come: the model is streaming when the learner cancels
        await until(pilot, lambda: "characters so far" in panel_text(panel)[0], what="the reply to stream")
        assert panel.streaming
        await pilot.press("escape")
        panel = await hint_done(app, pilot, timeout=5)
        assert "Hint cancelled." in panel_text(panel)[0] and panel.shown == 0

    run_app(check, tmp_path, AISettings(model="scripted/tutor"))


APP_OFFLINE = """
import asyncio, socket, sys
def refuse(*a, **k):
    raise OSError("no network in this test")
socket.socket.connect = refuse
socket.getaddrinfo = refuse
from tutor.ai.config import AISettings
from tutor.app.app import make_app
from tutor.app.widgets.hints import HintsPanel

async def main():
    settings = AISettings(model="openai/gpt-4o-mini", offline=True)
    app = make_app(data_dir=sys.argv[1], backend="sim", ai_settings=settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("f7")
        await pilot.pause()
        print("SHOWN:", app.query_one(HintsPanel).shown)
        found = app.query("#hints-text")
        print("HINT:", found.first().source if found else "")
asyncio.run(main())
print("LITELLM:", "litellm" in sys.modules)
"""


def test_offline_the_app_serves_authored_hints_without_litellm_or_network(tmp_path, catalog):
    done = subprocess.run([*no_network_prefix(), sys.executable, "-c", APP_OFFLINE, str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert catalog.get("map").hints[0] in done.stdout
    assert "LITELLM: False" in done.stdout


CLI_OFFLINE = """
import socket, sys
def refuse(*a, **k):
    raise OSError("no network in this test")
socket.socket.connect = refuse
socket.getaddrinfo = refuse
from tutor.cli import main
rc = main(["hint", "map", sys.argv[1], "--offline", "--model", "openai/gpt-4o-mini", "--level", "2"])
print("RC:", rc, "LITELLM:", "litellm" in sys.modules)
"""


def test_offline_the_hint_command_prints_the_authored_hint_without_litellm_or_network(tmp_path, catalog):
    kernel = tmp_path / "map.py"
    kernel.write_text(WRONG)
    env = {**os.environ, "GPU_TUTOR_DATA": str(tmp_path / "data"), "GPU_TUTOR_CONFIG": str(tmp_path / "c.toml")}
    (tmp_path / "c.toml").write_text("[ai]\nmodel = \"openai/gpt-4o-mini\"\n")
    done = subprocess.run([*no_network_prefix(), sys.executable, "-c", CLI_OFFLINE, str(kernel)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert catalog.get("map").hints[1] in done.stdout and "offline" in done.stderr
    assert "RC: 0 LITELLM: False" in done.stdout
