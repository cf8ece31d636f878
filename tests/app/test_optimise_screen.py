"""The optimiser in the app: a solved puzzle, a budget, rounds in a table, a verified diff, a new file."""

import asyncio
import re

from loopback_llm import ChatServer
from scripted_llm import register
from textual.widgets import DataTable, Input, Static, TextArea

from tutor.ai.config import AISettings
from tutor.app.app import make_app
from waiting import until
from warm_runners import app_runner

FASTER = """from numba import cuda


@cuda.jit
def kernel(out, a):
    t = cuda.threadIdx.x
    out[t] = a[t] + 10
"""


def run_app(coro, tmp_path, settings):
    async def main():
        app = make_app(data_dir=tmp_path, backend="sim", seed=1, ai_settings=settings, runner=app_runner())
        async with app.run_test(size=(130, 45)) as pilot:
            await pilot.pause()
            await coro(app, pilot)

    asyncio.run(main())


async def solve_map(app, pilot, catalog):
    app.query_one("#editor", TextArea).load_text(catalog.get("map").reference)
    app.last_result = None
    await pilot.press("ctrl+r")
    await until(pilot, lambda: app.last_result is not None, what="the run to finish")
    assert app.store.progress("map").solved


async def run_to_the_end(screen, pilot, every=lambda: None):
    """Start the session and wait for its result, calling `every` on each turn of the wait."""
    def finished() -> bool:
        if screen.result is not None:
            return True
        every()
        return False

    screen.start()
    await until(pilot, finished, timeout=120, what="the optimiser to finish")


async def open_optimiser(app, pilot):
    await pilot.press("f6")
    await until(pilot, lambda: type(app.screen).__name__ == "OptimiseScreen", what="the optimiser")
    return app.screen


def test_optimise_runs_rounds_shows_the_verified_diff_and_saves_a_new_file(tmp_path, catalog):
    register([f"```python\n{FASTER}```\n\nWhy it is faster: one name shorter.", "no code this time"])

    async def check(app, pilot):
        await solve_map(app, pilot, catalog)
        mine = app.query_one("#editor", TextArea).text
        screen = await open_optimiser(app, pilot)
        screen.query_one("#opt-rounds-max", Input).value = "2"
        await run_to_the_end(screen, pilot)
        table = screen.query_one("#opt-rounds", DataTable)
        assert table.row_count == 2
        assert str(table.get_row_at(0)[0]).startswith("round 1: correct")
        assert str(table.get_row_at(1)[0]).startswith("round 2: no code block in the reply")
        status = str(screen.query_one("#opt-status", Static).render())
        assert "stopped (rounds: every round of the budget was spent)" in status and "\nbest: round 1" in status
        assert "not checked by the verifier" in screen.query_one("#opt-why").source
        await pilot.press("ctrl+s")
        assert screen.saved is not None and screen.saved.read_text() == FASTER
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is not screen, what="the optimiser to close")
        assert app.query_one("#editor", TextArea).text == mine  # nothing overwritten

    run_app(check, tmp_path, AISettings(model="scripted/tutor"))


def test_optimise_needs_a_solved_puzzle_and_a_model(tmp_path, catalog):
    async def check(app, pilot):
        await pilot.press("f6")
        await pilot.pause()
        assert type(app.screen).__name__ != "OptimiseScreen"
        await solve_map(app, pilot, catalog)
        await pilot.press("f6")
        await until(pilot, lambda: any("needs a model" in str(n.message) for n in app._notifications),
                    what="the refusal")
        assert type(app.screen).__name__ != "OptimiseScreen"

    run_app(check, tmp_path, AISettings())


def test_the_models_explanation_code_and_live_reply_are_shown_escaped_never_obeyed(tmp_path, catalog):
    from test_editor import obeyed

    title, clear = "\x1b]0;pwned\x07", "\x1b[2J"
    code = FASTER.replace("def kernel", f"# {title}\ndef kernel", 1)
    register([f"```python\n{code}```\n\nWhy it is faster: {title}{clear} [link=https://evil.example]see[/link]"])

    async def check(app, pilot):
        await solve_map(app, pilot, catalog)
        screen = await open_optimiser(app, pilot)
        screen.query_one("#opt-rounds-max", Input).value = "1"
        await run_to_the_end(screen, pilot)
        await pilot.pause()
        assert screen.result.best is not None
        assert obeyed(app) == []
        why = screen.query_one("#opt-why").source
        assert "\n\n\\x1b]0;pwned\\x07\\x1b[2J [link=https://evil.example]see[/link]" in why
        assert "\\x1b]0;pwned\\x07" in str(screen.query_one("#opt-live", Static).render())
        assert screen.query_one("#opt-why")._open_links is False

    run_app(check, tmp_path, AISettings(model="scripted/tutor"))


def _clock_text(screen) -> str:
    return str(screen.query_one("#opt-clock", Static).render())


def _seconds_left(text: str) -> int:
    m = re.search(r"Wall time left: (\d+):(\d\d) of", text)
    assert m, text
    return 60 * int(m.group(1)) + int(m.group(2))


def test_the_wall_time_left_counts_down_and_a_slow_reply_is_not_cut_when_it_runs_out(tmp_path, catalog,
                                                                                      monkeypatch):
    """A local server (no key set) streams slower than the 3-second budget: the screen counts the wall
    time down, says when it is up, lets the reply finish, then says how to give it more."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    words = "I would first look at how each thread loads a and only then decide"
    with ChatServer([("slow", 0.5, words)]) as server:
        settings = AISettings(model="openai/tiny", api_base=server.url, timeout=10)

        async def check(app, pilot):
            await solve_map(app, pilot, catalog)
            screen = await open_optimiser(app, pilot)
            screen.query_one("#opt-minutes", Input).value = "0.05"
            seen = []
            await run_to_the_end(screen, pilot, every=lambda: seen.append(_clock_text(screen)))
            counting = [_seconds_left(t) for t in seen if t.startswith("Wall time left")]
            assert counting[0] == 3 and counting[-1] < counting[0], seen
            assert all("of 0:03 (model replies count too)" in t for t in seen if t.startswith("Wall time left"))
            assert "Wall time is up (0:03): round 1 runs to its end, then the session stops." in seen
            assert screen.result.stop_reason == "time" and len(screen.result.attempts) == 1
            assert str(screen.query_one("#opt-live", Static).render()).endswith("only then decide")  # not cut
            assert re.fullmatch(r"Wall time used: 0:\d\d of 0:03\.", _clock_text(screen))
            status = str(screen.query_one("#opt-status", Static).render())
            assert "The wall-time budget of 3s ran out: it counts the model's replies and the verification, and a " \
                   "round that had begun ran to its end. Give it more by opening the optimiser again with more " \
                   "minutes, or set optimise_wall_time = \"6s\" under [ai] in " in status

        run_app(check, tmp_path, settings)
    assert server.requests[0]["authorization"] == "Bearer sk-no-key-required"


def test_the_budget_fields_start_from_the_ai_settings_and_say_wall_time(tmp_path, catalog):
    async def check(app, pilot):
        await solve_map(app, pilot, catalog)
        screen = await open_optimiser(app, pilot)
        assert screen.query_one("#opt-minutes", Input).value == "30"
        assert screen.query_one("#opt-rounds-max", Input).value == "4"
        assert "wall-clock minutes" in str(screen.query_one("#opt-form Label").render())
        budget = screen.budget()
        assert (budget.wall_s, budget.rounds) == (1800.0, 4)

    run_app(check, tmp_path, AISettings(model="scripted/tutor", optimise_wall_s=1800.0, optimise_rounds=4))


def test_a_solved_coaching_task_shows_its_walkthrough_unless_the_room_keeps_solutions_closed(tmp_path, monkeypatch):
    from tutor.app.app import TutorApp
    from tutor.coach.tasks import load_task

    step = (load_task("reduce_sum").folder / "steps" / "3_warp_shuffle.py").read_text()
    seen = {}

    async def check(app, pilot):
        register([f"```python\n{step}```\n\nWhy it is faster: warp shuffles."])
        app.action_optimise_task()
        await until(pilot, lambda: type(app.screen).__name__ == "TaskPicker", what="the task picker")
        app.screen.dismiss("reduce_sum")
        await until(pilot, lambda: type(app.screen).__name__ == "OptimiseScreen", what="the optimiser")
        screen = app.screen
        screen.query_one("#opt-rounds-max", Input).value = "1"
        await run_to_the_end(screen, pilot)
        seen.setdefault("best", []).append(screen.result.best is not None)
        seen.setdefault("why", []).append(screen.query_one("#opt-why").source)

    run_app(check, tmp_path / "open", AISettings(model="scripted/tutor"))
    monkeypatch.setattr(TutorApp, "solutions_policy", property(lambda self: "never"))
    run_app(check, tmp_path / "closed", AISettings(model="scripted/tutor"))
    assert seen["best"] == [True, True]
    opened, closed = seen["why"]
    assert "### Sum reduction: from the naive kernel to the expert one" in opened
    assert "#### 3. Warp shuffles for the first five levels" in opened
    assert "from the naive kernel" not in closed and "warp shuffles" in closed
