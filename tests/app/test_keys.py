"""Every key lands where and when it was typed, and every key a learner is told of reaches the app.

The keys here are posted to the app's queue with no pause between them, as a fast typist or a busy
machine delivers them: Pilot.press waits for each key to be handled, which hides any reordering.
"""

import asyncio

from textual import events
from textual.keys import _character_to_key
from textual.widgets import TextArea

from tutor.app.app import make_app
from tutor.app.keys import KEYS, listed
from tutor.app.widgets.hints import HintsPanel
from tutor.session import Session, Trust
from waiting import until
from warm_runners import app_runner

BROWSER_KEEPS = {"ctrl+w", "ctrl+n", "ctrl+t"}  # a browser closes the tab / opens a window or a tab


class T(str):
    """Text to type, a key per character (a plain string is a key's name)."""


def post(app, *names: str) -> None:
    """Keys into the app's queue at once, with no pause between them."""
    for name in names:
        if isinstance(name, T):  # as the terminal driver names them: " " is space, "." full_stop
            for char in name:
                app.post_message(events.Key(_character_to_key(char), char))
        else:
            app.post_message(events.Key(name, None))


async def settle(pilot, rounds: int = 4) -> None:
    for _ in range(rounds):
        await pilot.pause()


def run(coro, tmp_path, size=(120, 40), served=False, puzzle="map"):
    async def main():
        session = Session(trust=Trust.SERVED) if served else None
        app = make_app(data_dir=tmp_path, backend="sim", seed=1, runner=app_runner(), puzzle=puzzle, session=session)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await coro(app, pilot)

    asyncio.run(main())


def put_cursor_after(editor, text: str) -> None:
    row = next(r for r, line in enumerate(editor.document.lines) if text in line)
    editor.move_cursor((row, editor.document[row].index(text) + len(text)))


# -- 1. the editor applies every key in the order it arrived ------------------------------------
def test_backspaces_and_letters_posted_together_land_in_order(tmp_path):
    """The issue's case: `pass` deleted and `i = cuda.threadIdx.x` typed gave `pai = ...` (the
    backspaces, bound keys, ran after the letters queued behind them)."""
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text("def kernel(out, a):\n    pass\n")
        app.action_pane("code")
        put_cursor_after(editor, "pass")
        post(app, "backspace", "backspace", "backspace", "backspace", T("i = cuda.threadIdx.x"), "enter", "left",
             "right", "home", "end", T("out[i] = a[i] + 10"))
        await settle(pilot)
        assert editor.text == "def kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n"

    run(check, tmp_path)


def test_keys_typed_right_after_a_pane_key_zoom_or_puzzle_switch_land_in_the_editor(tmp_path):
    """Textual moves the focus from its queue (Widget.focus): letters already queued behind ctrl+e
    went to the lesson."""
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        for before in (["ctrl+l", "ctrl+e"], ["ctrl+l", "ctrl+e", "ctrl+f"], ["ctrl+g", "ctrl+f", "ctrl+e"]):
            app.action_pane("lesson")
            await settle(pilot)
            editor.load_text("x = 1\n")
            post(app, *before, "ctrl+end", T("y"))
            await settle(pilot)
            assert editor.text == "x = 1\ny", before
            if app._main.has_class("-zoomed"):
                app.action_zoom()

    run(check, tmp_path)


def test_at_80x24_a_tab_switch_and_typing_posted_together_type_in_the_code_tab(tmp_path):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        app.action_pane("lesson")
        await settle(pilot)
        editor.load_text("")
        post(app, "ctrl+e", T("abc"), "backspace", T("d"))
        await settle(pilot)
        assert editor.text == "abd"

    run(check, tmp_path, size=(80, 24))


def test_an_app_key_right_after_typing_acts_on_the_text_with_those_letters(tmp_path, catalog):
    """ctrl+r ran the code without the letters still queued in the editor, ctrl+s saved it without them."""
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        reference = catalog.get("map").reference
        editor.load_text(reference.replace("+ 10", "+ 1"))
        app.action_pane("code")
        put_cursor_after(editor, "+ 1")
        app.last_result = None
        post(app, T("0"), "ctrl+r")
        await until(pilot, lambda: app.last_result is not None, 60, "the run")
        assert app._ran_source == reference and app.last_result.verdict.passed
        post(app, "ctrl+end", T("# mine"), "ctrl+s")
        await settle(pilot)
        assert app.store.load_code("map", "").endswith("# mine")

    run(check, tmp_path)


def test_the_learner_name_box_keeps_the_order_too(tmp_path):
    from tutor.app.screens.learner_name import NameScreen

    async def check(app, pilot):
        app.push_screen(NameScreen("room", tmp_path))
        await settle(pilot)
        box = app.screen.query_one("#name")
        post(app, T("Ann"), "backspace", "backspace", T("da"), "left", "backspace", T("n"))
        await settle(pilot)
        assert box.value == "Ana"  # A n n, two back: A; d a: Ada; left, back: Aa; n: Ana

    run(check, tmp_path)


# -- the editor as a Python editor ----------------------------------------------------------------
def test_backspace_in_the_indentation_takes_a_level_and_home_then_backspace_never_joins_lines(tmp_path):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text("def k():\n    if x:\n        y = 1\n")
        app.action_pane("code")
        put_cursor_after(editor, "y = 1")
        post(app, "home", "backspace")
        await settle(pilot)
        assert editor.text == "def k():\n    if x:\n    y = 1\n"
        post(app, "backspace")
        await settle(pilot)
        assert editor.text == "def k():\n    if x:\ny = 1\n"
        editor.load_text("def k():\n      y = 1\n")  # six spaces: back to the tab stop at four
        put_cursor_after(editor, "      ")
        post(app, "backspace")
        await settle(pilot)
        assert editor.text == "def k():\n    y = 1\n"
        put_cursor_after(editor, "y = 1")
        post(app, "backspace", T("2"))  # after code, one character as ever
        await settle(pilot)
        assert editor.text == "def k():\n    y = 2\n"

    run(check, tmp_path)


def test_undo_takes_a_word_at_a_time_whatever_the_speed(tmp_path):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text("")
        app.action_pane("code")
        post(app, T("i = cuda.threadIdx.x"))
        await settle(pilot)
        steps = []
        while editor.text:
            post(app, "ctrl+z")
            await settle(pilot, 2)
            steps.append(editor.text)
        assert steps == ["i = cuda.threadIdx", "i = cuda", "i", ""]

    run(check, tmp_path)


def test_the_reference_diff_keeps_a_last_line_without_newline_on_its_own_line():
    from tutor.sourcelines import unified_diff

    diff = unified_diff("a = 1\nb = 2", "a = 1\nb = 3\n", "your code", "reference")
    assert "-b = 2\n+b = 3\n" in diff


# -- 2. served keys ----------------------------------------------------------------------------
def test_served_bindings_hold_no_key_a_browser_keeps_and_footer_f1_and_palette_say_the_served_keys(tmp_path):
    from tutor.app.commands import actions

    async def check(app, pilot):
        bound = {b.key for b in app._bindings.key_to_bindings.values() for b in b}
        assert not bound & BROWSER_KEEPS
        footer_keys = {k for k, active in app.active_bindings.items() if active.binding.show}
        assert not footer_keys & BROWSER_KEEPS and "ctrl+o" in footer_keys
        said = " ".join(k for k, _, _ in listed(True)) + " ".join(k for _, _, k in actions(True))
        assert not any(k in said for k in BROWSER_KEEPS)
        await pilot.press("f1")
        await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", what="help")
        await settle(pilot)
        help_text = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "ctrl+o" in help_text and "f10" in help_text
        assert not any(k in help_text for k in BROWSER_KEEPS)
        await pilot.press("escape")
        await pilot.press("ctrl+o")
        assert app.watching
        await pilot.press("f10")
        assert app.puzzle.id != "map"

    run(check, tmp_path, served=True)


def test_the_terminal_keeps_its_keys(tmp_path):
    async def check(app, pilot):
        await pilot.press("ctrl+w")
        assert app.watching
        await pilot.press("ctrl+n")
        assert app.puzzle.id != "map"
        assert {"ctrl+w", "ctrl+r", "f7"} <= {k for k, a in app.active_bindings.items() if a.binding.show}

    run(check, tmp_path)


def test_every_app_key_is_priority_and_none_is_a_letter():
    for served in (False, True):
        from tutor.app.keys import bindings

        for b in bindings(served):
            assert b.priority, b
            assert len(b.key) > 1 and b.key not in ("question_mark",), b
    assert all(k.what for k in KEYS)


# -- 3. every pane by a documented key; letters elsewhere do nothing --------------------------
def test_the_failure_list_is_reached_by_ctrl_e_again_and_by_f4_and_enter_goes_to_its_line(tmp_path, catalog):
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        broken = catalog.get("map").reference.replace("+ 10", "+ 11")
        assert broken != catalog.get("map").reference
        editor.load_text(broken)
        app.last_result = None
        await pilot.press("ctrl+r")
        await until(pilot, lambda: app.last_result is not None, 60, "the run")
        assert not app.last_result.verdict.passed
        await pilot.press("ctrl+e")  # the focus was in the editor: now the failures under it
        assert app.focused.id == "verdict-list"
        await pilot.press("enter")
        await settle(pilot)
        assert app.focused is editor
        failure = app.last_result.verdict.failures[0]
        assert editor.cursor_location[0] == failure.line - 1
        seen = []
        for _ in range(4):
            await pilot.press("f4")
            seen.append(app._pane_of_focus())
        assert seen == ["failures", "threads", "lesson", "code"]
        head = app.query_one("#verdict").head_text
        assert "ctrl+e" in head  # the verdict says how to get there

    run(check, tmp_path)


def test_a_letter_where_no_text_goes_fires_nothing_and_says_where_text_goes(tmp_path):
    async def check(app, pilot):
        notices = []
        app.notify = lambda message, **kw: notices.append(str(message))
        for pane in ("lesson", "threads"):
            app.action_pane(pane)
            await settle(pilot)
            post(app, T("threadIdx"))
            await settle(pilot)
        assert app.query_one(HintsPanel).shown == 0
        assert app.store.progress("map").hint_levels_used == 0
        assert not app.watching and app.last_result is None
        assert notices and all("ctrl+e" in n for n in notices)
        assert len(notices) <= 2  # quiet: once per few seconds, not once per letter

    run(check, tmp_path)


def test_ctrl_s_from_habit_says_the_code_is_saved(tmp_path):
    async def check(app, pilot):
        notices = []
        app.notify = lambda message, **kw: notices.append(str(message))
        editor = app.query_one("#editor", TextArea)
        editor.load_text("x = 1\n")
        await pilot.press("ctrl+s")
        assert any("Saved" in n for n in notices)
        assert app.store.load_code("map", "") == "x = 1\n"

    run(check, tmp_path)


def test_an_app_key_waits_while_a_dialog_is_open(tmp_path):
    async def check(app, pilot):
        await pilot.press("f1")
        await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", what="help")
        await pilot.press("f2", "ctrl+n", "ctrl+r")
        await settle(pilot)
        assert type(app.screen).__name__ == "HelpScreen" and app.puzzle.id == "map" and app.last_result is None
        await pilot.press("f1")  # the dialog's own key closes it
        await until(pilot, lambda: type(app.screen).__name__ != "HelpScreen", what="help closed")

    run(check, tmp_path)



def test_the_palette_still_runs_app_actions_though_app_keys_wait_for_dialogs(tmp_path):
    async def check(app, pilot):
        for words, done in (("watch mode", lambda: app.watching), ("the next puzzle", lambda: app.puzzle.id != "map")):
            await pilot.press("ctrl+p")
            await until(pilot, lambda: type(app.screen).__name__ == "CommandPalette", what="the palette")
            await pilot.press(*words)

            def found(words=words):  # the palette searches in a worker: Enter once its best hit is ours
                from textual.command import CommandList

                hits = app.screen.query_one(CommandList)
                best = hits.highlighted_option if hits.highlighted is not None else None
                return best is not None and words.split()[-1] in str(best.prompt).lower()

            await until(pilot, found, what=f"the palette's hit for {words}")
            await pilot.press("enter")
            await until(pilot, done, what=words)

    run(check, tmp_path)


def test_a_served_learner_without_a_model_is_sent_to_the_facilitator_not_to_a_command_line_flag(tmp_path):
    async def check(app, pilot):
        assert "facilitator" in app._no_model() and "--model" not in app._no_model()

    async def local(app, pilot):
        assert "--model" in app._no_model()

    run(check, tmp_path / "served", served=True)
    run(local, tmp_path / "local")


def test_no_more_than_two_notices_stand_at_once_the_newest(tmp_path):
    async def check(app, pilot):
        for n in range(5):
            app.notify(f"notice {n}", timeout=30)
        await settle(pilot)
        assert [str(t.message) for t in app._notifications] == ["notice 3", "notice 4"]

    run(check, tmp_path, size=(80, 24))
