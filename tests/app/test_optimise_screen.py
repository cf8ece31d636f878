"""The optimiser in the app: a solved puzzle, a budget, rounds in a table, a verified diff, a new file."""

import asyncio
import time

from scripted_llm import register
from textual.widgets import DataTable, Input, Static, TextArea

from tutor.ai.config import AISettings
from tutor.app.app import make_app

FASTER = """from numba import cuda


@cuda.jit
def kernel(out, a):
    t = cuda.threadIdx.x
    out[t] = a[t] + 10
"""


def run_app(coro, tmp_path, settings):
    async def main():
        app = make_app(data_dir=tmp_path, backend="sim", seed=1, ai_settings=settings)
        async with app.run_test(size=(130, 45)) as pilot:
            await pilot.pause()
            await coro(app, pilot)

    asyncio.run(main())


async def solve_map(app, pilot, catalog):
    app.query_one("#editor", TextArea).load_text(catalog.get("map").reference)
    app.last_result = None
    await pilot.press("ctrl+r")
    started = time.monotonic()
    while app.last_result is None:
        assert time.monotonic() - started < 60
        await pilot.pause(0.05)
    assert app.store.progress("map").solved


def test_optimise_runs_rounds_shows_the_verified_diff_and_saves_a_new_file(tmp_path, catalog):
    register([f"```python\n{FASTER}```\n\nWhy it is faster: one name shorter.", "no code this time"])

    async def check(app, pilot):
        await solve_map(app, pilot, catalog)
        mine = app.query_one("#editor", TextArea).text
        await pilot.press("f6")
        await pilot.pause(0.2)
        screen = app.screen
        assert type(screen).__name__ == "OptimiseScreen"
        screen.query_one("#opt-rounds-max", Input).value = "2"
        screen.start()
        started = time.monotonic()
        while screen.result is None:
            assert time.monotonic() - started < 120, "the optimiser never finished"
            await pilot.pause(0.1)
        table = screen.query_one("#opt-rounds", DataTable)
        assert table.row_count == 2
        assert str(table.get_row_at(0)[1]) == "correct" and str(table.get_row_at(1)[1]) == "no code"
        status = str(screen.query_one("#opt-status", Static).render())
        assert "Stopped (rounds)" in status and "Best: round 1" in status
        assert "not checked by the verifier" in screen.query_one("#opt-why").source
        await pilot.press("ctrl+s")
        assert screen.saved is not None and screen.saved.read_text() == FASTER
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert app.query_one("#editor", TextArea).text == mine  # nothing overwritten

    run_app(check, tmp_path, AISettings(model="scripted/tutor"))


def test_optimise_needs_a_solved_puzzle_and_a_model(tmp_path, catalog):
    async def check(app, pilot):
        await pilot.press("f6")
        await pilot.pause(0.1)
        assert type(app.screen).__name__ != "OptimiseScreen"
        await solve_map(app, pilot, catalog)
        await pilot.press("f6")
        await pilot.pause(0.2)
        assert type(app.screen).__name__ != "OptimiseScreen"
        assert any("needs a model" in str(n.message) for n in app._notifications)

    run_app(check, tmp_path, AISettings())


def test_the_models_explanation_code_and_live_reply_are_shown_escaped_never_obeyed(tmp_path, catalog):
    from test_editor import obeyed

    title, clear = "\x1b]0;pwned\x07", "\x1b[2J"
    code = FASTER.replace("def kernel", f"# {title}\ndef kernel", 1)
    register([f"```python\n{code}```\n\nWhy it is faster: {title}{clear} [link=https://evil.example]see[/link]"])

    async def check(app, pilot):
        await solve_map(app, pilot, catalog)
        await pilot.press("f6")
        await pilot.pause(0.2)
        screen = app.screen
        screen.query_one("#opt-rounds-max", Input).value = "1"
        screen.start()
        started = time.monotonic()
        while screen.result is None:
            assert time.monotonic() - started < 120, "the optimiser never finished"
            await pilot.pause(0.1)
        await pilot.pause(0.2)
        assert screen.result.best is not None
        assert obeyed(app) == []
        why = screen.query_one("#opt-why").source
        assert "\n\n\\x1b]0;pwned\\x07\\x1b[2J [link=https://evil.example]see[/link]" in why
        assert "\\x1b]0;pwned\\x07" in str(screen.query_one("#opt-live", Static).render())
        assert screen.query_one("#opt-why")._open_links is False

    run_app(check, tmp_path, AISettings(model="scripted/tutor"))
