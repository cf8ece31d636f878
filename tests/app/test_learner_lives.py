"""The app as a learner lives in it: nothing typed is lost, focus is never a trap, every pane reads.

Each test starts from what a learner met: a keystroke after a jump that ate the line, letters
that fired hints at 80x24, a hint below the box's edge, a lesson opened half-way down, a kernel
body that fell to column 0. They drive the real app through Textual's pilot.
"""

import asyncio
import time

from textual.widgets import TextArea

from test_app import RACY_DOT, autosave_ticks, run_app, run_kernel, wait_for_result
from waiting import until

from tutor.app.app import make_app
from tutor.app.widgets.hints import HintsPanel
from tutor.app.widgets.thread_pane import ThreadPane
from tutor.app.widgets.verdict import VerdictView

BROKEN_DOT = RACY_DOT.replace("    t = cuda.threadIdx.x\n", "    t = cuda.threadIdx.x +\n")


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


# -- nothing typed is lost ------------------------------------------------------------------------
def test_enter_on_a_failure_then_a_key_keeps_the_lines_code(tmp_path):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text(RACY_DOT)
        verdict = (await run_kernel(app, pilot)).verdict
        line = verdict.failures[0].line
        before = editor.document[line - 1]
        app.query_one(VerdictView).focus()
        await pilot.press("enter")
        await until(pilot, lambda: app.focused is editor, what="the editor's focus")
        assert editor.selected_text == ""
        await pilot.press("x")
        row = editor.document[line - 1]
        assert row.replace("x", "", 1) == before and before.strip() in row  # the key went in; the code stayed

    run_app(check, tmp_path, puzzle="dot")


def test_enter_on_a_compile_failure_inserts_no_line(tmp_path):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text(BROKEN_DOT)
        verdict = (await run_kernel(app, pilot)).verdict
        assert verdict.failures and verdict.failures[0].line
        lines = editor.document.line_count
        app.query_one(VerdictView).focus()
        await pilot.press("enter")
        await until(pilot, lambda: app.focused is editor, what="the editor's focus")
        assert editor.document.line_count == lines and editor.text == BROKEN_DOT
        assert editor.cursor_location[0] == verdict.failures[0].line - 1

    run_app(check, tmp_path, puzzle="dot")


def test_at_80x24_the_code_tab_always_has_the_keys_and_letters_never_fire_hints(tmp_path):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        for _ in range(4):  # round the tabs and back to the code: whichever way the learner arrives
            await pilot.press("f4")
            await pilot.pause()
            if not app.query_one("#code-pane").has_class("-hidden"):
                assert app.focused is editor
        while app.query_one("#code-pane").has_class("-hidden"):
            await pilot.press("f4")
        app.query_one("#verdict-list").focus()  # even with the focus astray inside the code pane
        await pilot.press("t", "h")
        assert app.query_one(HintsPanel).shown == 0
        assert app.store.progress(app.puzzle.id).hint_levels_used == 0
        editor.focus()
        editor.move_cursor(editor.document.end)
        await pilot.press("t", "h")
        assert editor.text.endswith("th")
        assert app.store.progress(app.puzzle.id).hint_levels_used == 0

    run_app(check, tmp_path, size=(80, 24))


def test_a_reset_leaves_no_stale_result_on_screen(tmp_path, catalog):
    async def check(app, pilot):
        app.query_one("#editor", TextArea).load_text(catalog.get("map").reference)
        assert (await run_kernel(app, pilot)).verdict.passed
        assert app.query_one(ThreadPane).runs
        await pilot.press("f9")
        await until(pilot, lambda: type(app.screen).__name__ == "Confirm", what="the reset's question")
        await pilot.press("y")
        await until(pilot, lambda: app.last_result is None, what="the reset")
        await pilot.pause()
        assert "PASSED" not in app.query_one(VerdictView).head_text
        assert app.query_one(ThreadPane).runs == [] and app.last_result is None

    run_app(check, tmp_path)


def test_a_toast_waits_while_a_dialog_is_open(tmp_path):
    async def check(app, pilot):
        app.notify("before the dialog")
        await pilot.press("f1")
        await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", what="the help")
        assert not list(app._notifications)  # nothing draws over the dialog
        app.notify("while the dialog is open")
        await autosave_ticks(app, pilot)  # the tick that shows held notices has come, and held it
        assert not list(app._notifications)
        await pilot.press("escape")
        await until(pilot, lambda: list(app._notifications), what="the held notice")
        assert [n.message for n in app._notifications] == ["while the dialog is open"]

    run_app(check, tmp_path)


# -- every pane reads ---------------------------------------------------------------------------
def test_a_new_puzzles_lesson_opens_at_its_title(tmp_path):
    async def check(app, pilot):
        scroll = app.query_one("#lesson-scroll")
        scroll.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert scroll.scroll_y > 0
        await pilot.press("ctrl+n")
        await until(pilot, lambda: scroll.scroll_y == 0, what="the lesson back at its top")

    run_app(check, tmp_path)


def test_a_diagram_wider_than_the_lesson_scrolls_sideways_in_its_own_box(tmp_path):
    """At 120x40 the lesson was 27 columns and map's diagram is 40: only `t0 t1` showed. From 120
    columns the lesson holds every diagram whole (test_nothing_cut.py); just above the tabs' width,
    at 110, zip's 46-column one does not fit, and it scrolls in its own box rather than be cut or
    folded."""
    async def check(app, pilot):
        await pilot.press("ctrl+l")
        scroll = app.query_one("#lesson-scroll")
        fence = scroll.fences()[0]
        scroll.scroll_to_widget(fence, animate=False, immediate=True)
        await pilot.pause()
        assert "a[0] b[0]" in screen_text(app) and "b[3]" not in screen_text(app)
        assert fence.max_scroll_x > 0
        for _ in range(fence.max_scroll_x // 4 + 1):
            await pilot.press("right")
        await pilot.pause()
        assert fence.scroll_x == fence.max_scroll_x
        assert "a[3] b[3]" in screen_text(app) and "out[3]" in screen_text(app)
        assert scroll.scroll_x == 0  # the lesson's text stays put; only the diagram moved

    run_app(check, tmp_path, puzzle="zip", size=(110, 40))


def test_the_newest_hint_is_in_view_and_the_box_scrolls(tmp_path):
    async def check(app, pilot):
        app.query_one("#lesson-scroll").focus()
        for _ in range(3):
            await pilot.press("f7")
        panel = app.query_one(HintsPanel)
        scroll = panel.query_one("#hints-scroll")
        assert panel.shown == 3
        await until(pilot, lambda: scroll.max_scroll_y > 0 and scroll.scroll_y == scroll.max_scroll_y,
                    what="hint 3 scrolled into view")
        assert scroll.max_scroll_y > 0, "three hints fit: the test needs a smaller box"
        assert scroll.scroll_y == scroll.max_scroll_y  # the end of hint 3 is what shows
        scroll.scroll_home(animate=False, immediate=True)
        assert scroll.scroll_y == 0  # and the learner can scroll back to hint 1

    run_app(check, tmp_path, size=(120, 30))


def test_after_a_long_line_the_editor_comes_back_to_column_0(tmp_path):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.focus()
        editor.move_cursor(editor.document.end)
        editor.insert("x = " + "1 + " * 60 + "1")
        editor.move_cursor(editor.document.end)
        await pilot.pause()
        assert editor.scroll_x > 0
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert editor.cursor_location == (0, 0) and editor.scroll_x == 0

    run_app(check, tmp_path)


def test_the_summary_stays_in_view_above_many_failures(tmp_path):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text(RACY_DOT.replace("cache[t] = a[i] * b[i] if i < size else 0", "cache[t] = a[i + 99]"))
        verdict = (await run_kernel(app, pilot)).verdict
        assert len(verdict.failures) >= 2
        await pilot.pause()
        failures = app.query_one("#verdict-list")
        failures.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert "FAILED" in app.query_one(VerdictView).head_text
        assert "FAILED" in screen_text(app)

    run_app(check, tmp_path, puzzle="dot")


def test_the_empty_thread_pane_says_one_thing_once(tmp_path):
    async def check(app, pilot):
        text = screen_text(app)
        assert "no launch to show" not in text
        assert text.count("No run to show yet") == 1

    run_app(check, tmp_path)


def test_the_memory_legend_explains_exp_got_in_a_narrow_pane(tmp_path):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text(app.puzzle.starter.replace("    pass", "    out[cuda.threadIdx.x] = 1"))
        await run_kernel(app, pilot)
        await pilot.pause()
        lines = app.query_one("#thread-arrays").lines_text()
        legend = " ".join(lines[1:5])
        assert "exp/got" in legend and "expected/got" in legend
        width = app.query_one("#thread-arrays").scrollable_content_region.width
        assert all(len(line) <= width for line in lines[:5]), (width, lines[:5])

    run_app(check, tmp_path)


# -- the keyboard reaches everything --------------------------------------------------------------
def test_one_key_per_pane_and_a_zoom(tmp_path):
    async def check(app, pilot):
        await pilot.press("ctrl+g")
        assert app.focused is app.query_one("#thread-grid")
        await pilot.press("ctrl+l")
        assert app.focused is app.query_one("#lesson-scroll")
        await pilot.press("ctrl+e")
        assert app.focused is app.query_one("#editor")
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert app.query_one("#lesson-pane").display is False or app.query_one("#lesson-pane").region.width == 0
        assert app.query_one("#code-pane").region.width == app.size.width
        await pilot.press("ctrl+g")  # another pane's key moves the zoom to it
        await pilot.pause()
        assert app.query_one("#threads").region.width == app.size.width
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert all(app.query_one(f"#{p}").region.width > 0 for p in ("lesson-pane", "code-pane", "threads"))
        await pilot.press("ctrl+e")  # the grid's own keys come first in the footer while it has the focus
        await pilot.pause()
        footer = screen_text(app).splitlines()[-1]
        assert all(key in footer for key in ("^l Lesson", "^e Code", "^g Grid", "^f Zoom", "f4 Pane")), footer

    run_app(check, tmp_path)


def test_at_80x24_the_footer_shows_every_pane_key_and_f4(tmp_path):
    async def check(app, pilot):
        footer = screen_text(app).splitlines()[-1]
        assert all(key in footer for key in ("^l Lesson", "^e Code", "^g Grid", "f4 Pane", "^r Run", "f1 Help"))
        await pilot.press("ctrl+g")
        assert not app.query_one("#threads").has_class("-hidden") and app.focused is app.query_one("#thread-grid")

    run_app(check, tmp_path, size=(80, 24))


def test_enter_keeps_the_indentation_and_a_colon_adds_a_level(tmp_path):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text("def kernel(out, a):\n    i = 0")
        editor.focus()
        editor.move_cursor(editor.document.end)
        await pilot.press("enter", *"if i < 4:", "enter", *"out[i] = a[i]", "enter")
        assert editor.text == "def kernel(out, a):\n    i = 0\n    if i < 4:\n        out[i] = a[i]\n        "
        await pilot.press(*"return", "enter")
        assert editor.text.endswith("        return\n    ")

    run_app(check, tmp_path)


def test_help_lists_no_ctrl_h_and_f8_without_a_gpu_gives_no_shell_advice(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_TUTOR_NO_GPU", "1")

    async def check(app, pilot):
        await pilot.press("f1")
        await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", what="the help")
        await pilot.pause()
        text = screen_text(app)
        assert "ctrl+h" not in text and "F7" in text.upper()
        await pilot.press("escape")
        await until(pilot, lambda: type(app.screen).__name__ != "HelpScreen", what="the help to close")
        await pilot.press("f8")
        await until(pilot, lambda: any("no CUDA GPU" in str(n.message) for n in app._notifications),
                    what="F8's answer")
        assert app.backend == "sim"
        said = " ".join(str(n.message) for n in app._notifications)
        assert "no CUDA GPU" in said and "--backend" not in said

    run_app(check, tmp_path)


# -- messages that teach ----------------------------------------------------------------------------
def test_watch_mode_keeps_the_last_grid_while_a_line_is_half_typed(tmp_path, catalog):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text(catalog.get("map").reference)
        first = await run_kernel(app, pilot)
        await pilot.press("ctrl+w")
        editor.focus()
        editor.move_cursor(editor.document.end)
        # every prefix of what is typed is incomplete Python: on a loaded machine watch mode may look
        # between any two keys ("x" of "x = (" is a whole statement, and ran)
        await pilot.press(*"(1 +")
        view = app.query_one(VerdictView)
        await until(pilot, lambda: "not complete Python yet" in view.head_text, what="watch mode's look")
        assert app.last_result is first and app.query_one(ThreadPane).runs  # the grid stays
        head = app.query_one(VerdictView).head_text
        assert "not complete Python yet" in head and head.count("line") == 1
        await pilot.press("1", ")")
        app.last_result = None
        assert (await wait_for_result(app, pilot)).verdict.passed

    run_app(check, tmp_path)


def test_the_first_run_says_it_starts_the_simulator_and_times_the_whole_wait(tmp_path, catalog):
    """The app's own children, cold; the run is asked for as soon as the app is up, before they
    can have warmed on a quiet machine (numba's import alone takes longer than getting here). On a
    loaded one the children may win that race: then the app must say it is running, not starting.
    The time shown is the whole wait from the app taking the key, the children's start included.
    ctrl+r's binding is tested by every other run in these tests."""
    async def main():
        app = make_app(data_dir=tmp_path, backend="sim", seed=1)
        async with app.run_test(size=(120, 40)) as pilot:
            app.query_one("#editor", TextArea).load_text(catalog.get("map").reference)
            app.last_result = None
            shown_at = []  # when the app put the final verdict up: this test's own view of it lags under load
            finalise = app._finalise
            app._finalise = lambda result, seconds: (shown_at.append(time.monotonic()), finalise(result, seconds))
            app.action_run()  # what ctrl+r does; read the head before the loop can finish the run
            taken = app._pressed_at
            head = app.query_one(VerdictView).head_text
            assert ("Starting the simulator" in head) or (app._warm and "Running" in head), head
            await wait_for_result(app, pilot)
            waited = shown_at[0] - taken
            await pilot.pause()
            head = app.query_one(VerdictView).head_text
            shown = float(head.split("(")[1].split()[0]) / (1000 if " ms)" in head else 1)
            # The whole wait, from the key to the final verdict (the children's start and the
            # compiler's word included), not the child's own run (about 0.05 s)
            assert shown >= 0.9 * waited - 0.1 and shown > 0.3, (head, waited)

    asyncio.run(main())


def test_a_full_folder_says_so_once_and_the_typed_code_stays_across_puzzles(tmp_path):
    """A served learner's folder has a cap: past it their code cannot be saved. They are told, and
    what they typed stays theirs in the editor (before, a failed save was silent)."""
    (tmp_path / "filler").write_bytes(b"x" * (2 << 20))  # the folder is already past its 1 MB

    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.insert("\n# my work\n")
        typed = editor.text
        await until(pilot, lambda: any("could not be saved" in n.message for n in app._notifications),
                    what="the autosave's failure said")
        await autosave_ticks(app, pilot)  # ticks that try again: they say nothing more
        said = [n.message for n in app._notifications]
        assert sum("could not be saved" in m and "facilitator allows" in m for m in said) == 1
        app.load_puzzle("zip")
        await pilot.pause()
        app.load_puzzle("map")
        await pilot.pause()
        assert editor.text == typed
        assert not app.store.code_path("map").exists()

    run_app(check, tmp_path, puzzle="map", data_quota_mb=1)
