"""The app driven as a learner drives it: open, type, run, read the verdict, move on."""

import asyncio

from textual.widgets import TextArea

from tutor.app.app import make_app
from tutor.app.widgets.hints import HintsPanel
from tutor.app.widgets.verdict import VerdictView
from tutor.puzzles import load_catalog
from tutor.store import Store
from waiting import until
from warm_runners import app_runner

RACY_DOT = '''import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    cache[t] = a[i] * b[i] if i < size else 0
    if t == 0:
        acc = 0.0
        for k in range(TPB):
            acc += cache[k]
        out[0] = acc
'''


def run_app(coro, tmp_path, size=(120, 40), cold=False, **kwargs):
    """`cold`: the app starts its own children, as a learner's does (else it borrows warm ones)."""
    async def main():
        runner = None if cold or "runner_timeout" in kwargs else app_runner()
        app = make_app(data_dir=tmp_path, backend="sim", seed=1, runner=runner, **kwargs)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await coro(app, pilot)

    asyncio.run(main())


async def wait_for_result(app, pilot, timeout=60.0):
    await until(pilot, lambda: app.last_result is not None, timeout, "the run to finish")
    return app.last_result


async def autosave_ticks(app, pilot, n: int = 2) -> None:
    """Wait for `n` more ticks of the app's autosave timer (a tick also shows the notices a dialog
    held): what a test waits for before saying something did not happen on a tick."""
    seen = [0]

    def counted():
        seen[0] += 1
        type(app)._show_deferred(app)

    app._show_deferred = counted
    try:
        await until(pilot, lambda: seen[0] >= n, what=f"{n} ticks of the autosave")
    finally:
        del app._show_deferred


async def run_kernel(app, pilot):
    app.last_result = None
    await pilot.press("ctrl+r")
    return await wait_for_result(app, pilot)


def test_editor_really_highlights_python(tmp_path):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        assert editor.language == "python"
        # tree-sitter produced highlight spans for the keywords of the starter
        await until(pilot, lambda: any(editor._highlights.values()), what="syntax highlighting")
        highlights = [h for line in editor._highlights.values() for h in line]
        assert any(name.startswith("keyword") for _, _, name in highlights)

    run_app(check, tmp_path)


def test_typing_a_correct_solution_passes_and_progress_advances(tmp_path, catalog):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        assert app.puzzle.id == "map"
        editor.load_text(catalog.get("map").starter.replace("    pass\n", ""))
        editor.focus()
        editor.move_cursor(editor.document.end)
        editor.insert("    out[cuda.threadIdx.x] = a[cuda.threadIdx.x] + 1")
        await pilot.press("0")  # the last keystroke typed for real
        result = await run_kernel(app, pilot)
        assert result.verdict.passed
        assert "PASSED" in app.query_one(VerdictView).head_text
        assert app.store.progress("map").solved and app.store.progress("map").attempts == 1
        assert f"1/{len(load_catalog().ids())} solved" in app.sub_title and "(solved)" in app.title

    run_app(check, tmp_path)


def test_a_race_is_shown_with_its_line_and_thread(tmp_path):
    async def check(app, pilot):
        app.load_puzzle("dot")
        app.query_one("#editor", TextArea).load_text(RACY_DOT)
        result = await run_kernel(app, pilot)
        verdict = result.verdict
        assert not verdict.passed and verdict.failures[0].kind == "race"
        view = app.query_one(VerdictView)
        view.focus()
        await pilot.press("enter")  # the first failure is highlighted
        await pilot.pause()
        editor = app.query_one("#editor", TextArea)
        assert editor.cursor_location[0] == verdict.failures[0].line - 1
        assert editor.selected_text == ""  # the cursor on the line, never a selection a key would replace
        assert editor.document[editor.cursor_location[0]][editor.cursor_location[1]:].startswith("cache[t]")
        # what the facilitator's live view will read of this run (tutor.workshop.live): the race, on
        # `cache`, by the shape of its lines (not their text); a passing run would clear it
        kept = app.store.progress("dot").last_failure
        assert kept["kind"] == "race" and kept["array"] == "cache" and kept["line"] == verdict.failures[0].line
        assert kept["shape"] == "cache[…] = a[…] * b[…] if _ < _ else 0" and kept["other_shape"] == "_ += cache[…]"
        assert app.store.progress("dot").last_run_at is not None

    run_app(check, tmp_path)


def test_reset_asks_first_and_keeps_a_backup(tmp_path, catalog):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text("# my precious attempt\n")
        await pilot.press("f9")
        await until(pilot, lambda: type(app.screen).__name__ == "Confirm", what="the reset's question")
        await pilot.press("n")
        await until(pilot, lambda: type(app.screen).__name__ != "Confirm", what="the question to close")
        assert editor.text == "# my precious attempt\n"
        await pilot.press("f9")
        await until(pilot, lambda: type(app.screen).__name__ == "Confirm", what="the reset's question")
        await pilot.press("y")
        await until(pilot, lambda: editor.text == catalog.get("map").starter, what="the starter back")
        backups = list((tmp_path / "code").glob("map.py.bak-*"))
        assert backups and backups[0].read_text() == "# my precious attempt\n"

    run_app(check, tmp_path)


def test_autosave_survives_a_restart(tmp_path):
    async def type_something(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.focus()
        editor.move_cursor(editor.document.end)
        editor.insert("# remember m")
        await pilot.press("e")
        # no explicit save: the autosaver writes it within a second or so of the last key
        await until(pilot, lambda: "# remember me" in Store(tmp_path).load_code("map", ""), what="the autosave")

    run_app(type_something, tmp_path)
    assert "# remember me" in Store(tmp_path).load_code("map", "")

    async def reopen(app, pilot):
        assert "# remember me" in app.query_one("#editor", TextArea).text

    run_app(reopen, tmp_path)


def test_continue_where_i_left_off(tmp_path):
    async def move(app, pilot):
        await pilot.press("ctrl+n")
        await pilot.press("ctrl+n")
        assert app.puzzle.id == "guard"

    run_app(move, tmp_path)

    async def reopen(app, pilot):
        assert app.puzzle.id == "guard"

    run_app(reopen, tmp_path)


def test_hints_reveal_one_level_at_a_time_and_are_remembered(tmp_path, catalog):
    async def hints(app, pilot):
        panel = app.query_one(HintsPanel)
        for where in ("#verdict", "#lesson-scroll", "#thread-grid"):
            app.query_one(where).focus()
            await pilot.press("h")  # no letter is a shortcut, wherever the focus is
            assert panel.shown == 0
        await pilot.press("f7")
        assert panel.shown == 1
        await pilot.press("f7")
        assert panel.shown == 2
        assert app.store.progress("map").hint_levels_used == 2

    run_app(hints, tmp_path)


def test_h_in_the_editor_types_an_h(tmp_path):
    async def typing(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.focus()
        editor.move_cursor(editor.document.end)
        await pilot.press("h")
        assert editor.text.endswith("h") and app.query_one(HintsPanel).shown == 0

    run_app(typing, tmp_path)


def test_reference_opens_only_once_solved(tmp_path, catalog):
    async def check(app, pilot):
        await pilot.press("f3")
        await pilot.pause()
        assert type(app.screen).__name__ != "ReferenceScreen"
        app.query_one("#editor", TextArea).load_text(catalog.get("map").reference)
        assert (await run_kernel(app, pilot)).verdict.passed
        await pilot.press("f3")
        await until(pilot, lambda: type(app.screen).__name__ == "ReferenceScreen", what="the reference")

    run_app(check, tmp_path)


def test_small_terminal_switches_panes_with_tabs(tmp_path):
    async def check(app, pilot):
        assert app.screen.has_class("-narrow")
        assert not app.query_one("#lesson-pane").has_class("-hidden")  # a newcomer opens on the task
        assert app.query_one("#code-pane").has_class("-hidden")
        await pilot.press("f4")
        await pilot.pause()
        visible = [p for p in ("lesson-pane", "code-pane", "threads") if not app.query_one(f"#{p}").has_class("-hidden")]
        assert len(visible) == 1

    run_app(check, tmp_path, size=(80, 24))


def test_a_corrupt_progress_file_is_moved_aside_and_the_app_starts(tmp_path):
    (tmp_path / "state.json").write_text("{ not json")

    async def check(app, pilot):
        assert app.puzzle.id == "map"
        assert any("moved" in n for n in app.store.notices)

    run_app(check, tmp_path)
    assert list(tmp_path.glob("state.json.corrupt-*"))


def test_importing_the_app_does_not_import_numba_or_litellm():
    import subprocess
    import sys

    code = "import tutor.app.app, sys; print('numba' in sys.modules, 'litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_code_a_gpu_would_reject_fails_even_when_the_simulator_is_happy(tmp_path):
    source = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n"
              "    xs = [10, 20]\n    out[i] = a[i] + xs[0]\n")

    async def check(app, pilot):
        app.query_one("#editor", TextArea).load_text(source)
        verdict = (await run_kernel(app, pilot)).verdict
        assert not verdict.passed and verdict.failures[0].kind == "compile_error"
        assert verdict.failures[0].line == 7
        assert not app.store.progress("map").solved

    run_app(check, tmp_path)


def test_selecting_a_race_selects_its_thread_and_phases_step(tmp_path):
    from tutor.app.widgets.thread_pane import ThreadPane

    async def check(app, pilot):
        app.load_puzzle("dot")
        app.query_one("#editor", TextArea).load_text(RACY_DOT)
        failure = (await run_kernel(app, pilot)).verdict.failures[0]
        app.query_one(VerdictView).focus()
        await pilot.press("enter")
        await pilot.pause()
        pane = app.query_one(ThreadPane)
        assert pane.grid.selected == pane.model.tid_of(failure.block, failure.thread)
        assert pane.model.status(pane.grid.selected) == "raced"

    run_app(check, tmp_path)


def test_phases_step_forward_and_back_in_the_grid(tmp_path, catalog):
    from tutor.app.widgets.thread_pane import ThreadPane

    async def check(app, pilot):
        app.load_puzzle("dot")
        app.query_one("#editor", TextArea).load_text(catalog.get("dot").reference)
        await run_kernel(app, pilot)
        pane = app.query_one(ThreadPane)
        assert pane.model.n_phases == 2
        pane.grid.focus()
        assert pane.grid.phase == 0
        await pilot.press("right_square_bracket")
        assert pane.grid.phase == 1
        await pilot.press("left_square_bracket")
        assert pane.grid.phase == 0

    run_app(check, tmp_path)


def test_watch_mode_runs_after_typing_stops(tmp_path):
    async def check(app, pilot):
        await pilot.press("ctrl+w")
        assert app.watching and "watch on" in app.sub_title
        editor = app.query_one("#editor", TextArea)
        editor.move_cursor(editor.document.end)
        app.last_result = None
        await pilot.press("x")
        assert app.last_result is None  # not at once: it waits for typing to stop
        await wait_for_result(app, pilot)

    run_app(check, tmp_path)


def test_the_palette_offers_every_bound_action_in_both_modes():
    from tutor.app.app import TutorApp
    from tutor.app.commands import actions
    from tutor.app.keys import bindings

    for served in (False, True):
        offered = {action for _, action, _ in actions(served)}
        assert {b.action for b in bindings(served)} <= offered
    assert {b.action for b in TutorApp.BINDINGS} == {b.action for b in bindings(False)}


def test_a_notice_quoting_a_bad_id_from_the_state_file_is_shown_as_plain_escaped_text(tmp_path):
    import json

    from test_editor import obeyed

    bad = "\x1b]0;pwned\x07[link=https://evil.example]x[/link]"
    (tmp_path / "state.json").write_text(json.dumps({"version": 1, "puzzles": {bad: {}}}))

    async def check(app, pilot):
        shown = "unreadable (\\x1b]0;pwned\\x07[link=https://evil.example]x[/link])"
        await until(pilot, lambda: any(shown in n.message for n in app._notifications), what="the notice")
        assert obeyed(app) == []

    run_app(check, tmp_path)


def test_a_kernels_prints_and_error_messages_are_drawn_escaped_in_the_verdict(tmp_path):
    from test_editor import obeyed

    source = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n"
              "    if i == 0:\n        print('\\x1b]0;pwned\\x07\\x1b[2J\\u202e')\n"
              "        raise ValueError('\\x1b]8;;https://evil.example\\x1b\\\\here \\x9b31m')\n    out[i] = a[i] + 10\n")

    async def check(app, pilot):
        app.query_one("#editor", TextArea).text = source
        result = await run_kernel(app, pilot)
        assert not result.verdict.passed and "\x1b" in result.verdict.printed
        await app.workers.wait_for_complete()
        await pilot.pause()  # the verdict drawn
        assert obeyed(app) == []

    run_app(check, tmp_path)
