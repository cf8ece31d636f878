"""Keys a fast typist, a busy laptop or a learner in the wrong pane sends: each case here lost or
misplaced what was typed before it was fixed. The keys are posted with no pause between them, as
in test_keys.py (Pilot.press waits for each key and hides any reordering)."""

from textual import events
from textual.widgets import TextArea

from test_keys import T, post, run, settle
from tutor.store import Store
from waiting import until


def test_letters_typed_just_before_a_puzzle_switch_are_saved_with_the_puzzle_they_were_typed_in(tmp_path):
    """The autosaver hears of a change when the editor's Changed message has bubbled up to the app,
    after the pane and the screen: ctrl+n read before it saved the puzzle without its last letters,
    and they were gone for good once the next puzzle's code was in the editor."""
    async def check(app, pilot):
        post(app, "ctrl+end", T("# typed in map"), "ctrl+n", "ctrl+end", T("# typed in zip"), "ctrl+b")
        await settle(pilot)
        assert app.puzzle.id == "map"
        assert app.store.load_code("map", "").endswith("# typed in map")
        assert app.store.load_code("zip", "").endswith("# typed in zip")
        assert app.query_one("#editor", TextArea).text.endswith("# typed in map")

    run(check, tmp_path)


def test_letters_typed_just_before_quitting_are_saved(tmp_path):
    async def check(app, pilot):
        post(app, "ctrl+end", T("# the last line"), "ctrl+q")
        await until(pilot, lambda: not app.is_running, 20, "the app to quit")

    run(check, tmp_path)
    assert Store(tmp_path).load_code("map", "").endswith("# the last line")


def test_keys_typed_right_after_a_dialog_closes_land_in_the_editor(tmp_path):
    """A dialog's own keys (escape, F1 in help, Enter in the puzzle list, y in a question) ran only
    once the key had gone down to the dialog's widget and back up: the letters typed right after
    them went to the dialog being closed, and were lost."""
    from tutor.app.screens.learner_name import NameScreen
    from tutor.app.screens.reference import ReferenceScreen

    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        main = app.screen
        for opening, closing in (("f1", ["escape"]), ("f1", ["f1"]), ("f9", ["n"]), (ReferenceScreen, ["f3"])):
            editor.load_text("")
            if opening is ReferenceScreen:  # F3 opens it once the puzzle is solved
                app.push_screen(ReferenceScreen(app.puzzle, ""))
            else:
                post(app, opening)
            await until(pilot, lambda: app.screen is not main, 20, f"{opening} to open")
            post(app, *closing, T("abc"))
            await settle(pilot)
            assert app.screen is main and editor.text == "abc", (opening, closing, editor.text)

        post(app, "f9")  # reset: y, and the letters type into the starter
        await until(pilot, lambda: app.screen is not main, 20, "the reset question")
        post(app, "y", "ctrl+end", T("# after"))
        await settle(pilot)
        assert editor.text == app.puzzle.starter + "# after"

        post(app, "f2")
        await until(pilot, lambda: app.screen is not main, 20, "the puzzle list")
        post(app, "down", "enter", "ctrl+end", T("# in zip"))
        await settle(pilot)
        assert app.puzzle.id == "zip" and editor.text.endswith("# in zip")

        app.push_screen(NameScreen("room", tmp_path))
        await settle(pilot)
        post(app, T("Ann"), "enter", "ctrl+end", T("# named"))
        await settle(pilot)
        assert app.screen is main and editor.text.endswith("# named")

    run(check, tmp_path)


def test_a_bound_key_in_a_pane_without_text_acts_there_though_a_pane_key_follows_at_once(tmp_path, catalog):
    """The arrows of the lesson, the grid and the failure list ran from the app's queue, once the key
    had gone down to the pane and back: `down down ctrl+e` in the lesson moved the editor's cursor two
    lines, and `down ctrl+l` in the failures scrolled the lesson."""
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text(catalog.get("map").reference.replace("+ 10", "+ 11"))
        await pilot.press("ctrl+r")
        await until(pilot, lambda: app.last_result is not None, 60, "the run")
        lesson = app.query_one("#lesson-scroll")
        for pane, away in (("lesson", "ctrl+e"), ("threads", "ctrl+e"), ("failures", "ctrl+l")):
            app.action_pane(pane)
            await settle(pilot)
            editor.move_cursor((0, 0))
            lesson.scroll_home(animate=False, immediate=True)
            post(app, "down", "down", away)
            await settle(pilot)
            assert editor.cursor_location == (0, 0), pane
            # (two downs in one frame scroll one line: Textual's scroll_down starts from the target
            # the last frame set)
            assert (lesson.scroll_y > 0) == (pane == "lesson"), pane

    run(check, tmp_path)


def test_code_pasted_where_no_text_goes_says_where_it_goes(tmp_path):
    """A paste into the lesson or the grid vanished without a word (a letter typed there says to
    press ctrl+e)."""
    async def check(app, pilot):
        notices = []
        app.notify = lambda message, **kw: notices.append(str(message))
        editor = app.query_one("#editor", TextArea)
        before = editor.text
        for pane in ("lesson", "threads"):
            app.action_pane(pane)
            await settle(pilot)
            app._typed_nowhere_at = 0.0  # each pane's paste may say it
            app.post_message(events.Paste("i = cuda.threadIdx.x"))
            await settle(pilot)
            assert len(notices) == 1 and "ctrl+e" in notices[0] and "paste" in notices[0], pane
            notices.clear()
        assert editor.text == before
        app.action_pane("code")
        app.post_message(events.Paste("# pasted"))
        await settle(pilot)
        assert "# pasted" in editor.text and not notices

    run(check, tmp_path)


def test_escape_in_the_editor_keeps_the_keys_there_typed_fast_or_slow(tmp_path):
    """Textual's TextArea gives escape the focus to the next widget (the failure list under it, empty
    or not), from the editor's queue: typed fast the letters after escape still went into the code,
    typed slowly they were lost to the failure list. Escape now only drops a selection."""
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text("")
        app.action_pane("code")
        post(app, T("ab"), "escape", T("cd"))  # fast
        await settle(pilot)
        post(app, "escape")  # slow: the letters come once escape is done
        await settle(pilot)
        post(app, T("ef"), "shift+left", "escape", T("g"))
        await settle(pilot)
        # the f selected, escape drops the selection (g no longer replaces f), the cursor where it was
        assert app.focused is editor and editor.text == "abcdegf"

    run(check, tmp_path)


def test_an_app_key_does_not_wait_on_a_widget_that_is_gone(tmp_path):
    """caught_up asks the focused widget to say when its queue is done; a widget already removed
    (a pane's list redrawn under the focus) never answers, and the key waited the whole second."""
    import time

    from textual.widgets import Static

    from tutor.app.app import caught_up

    async def check(app, pilot):
        gone = Static("x")
        await app.screen.mount(gone)
        await gone.remove()
        started = time.monotonic()
        await caught_up(gone, limit=30.0)  # a limit far past any busy machine's delay: waiting it is the bug
        assert time.monotonic() - started < 10

    run(check, tmp_path)


def test_tab_on_selected_lines_indents_them_and_shift_tab_dedents(tmp_path):
    """Tab with lines selected replaced them with four spaces (the learner's code gone), and shift+tab
    left the editor for the hints; as in any code editor, they indent and dedent the lines now."""
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        app.action_pane("code")
        editor.load_text("def k():\n    a = 1\n\n    b = 2\nc = 3\n")
        editor.move_cursor((1, 0))
        post(app, "shift+down", "shift+down", "shift+down", "tab")
        await settle(pilot)
        assert editor.text == "def k():\n        a = 1\n\n        b = 2\nc = 3\n"  # a blank line stays blank
        post(app, "shift+tab", "shift+tab")
        await settle(pilot)
        assert editor.text == "def k():\na = 1\n\nb = 2\nc = 3\n"
        post(app, "ctrl+z")
        await settle(pilot)
        assert editor.text == "def k():\n    a = 1\n\n    b = 2\nc = 3\n"
        editor.move_cursor((1, 6))  # no selection: shift+tab dedents the cursor's line
        post(app, "shift+tab", T("x"))
        await settle(pilot)
        assert app.focused is editor and editor.document[1] == "a x= 1"

    run(check, tmp_path)


def test_ctrl_p_opens_the_command_palette_in_a_browser_too_and_takes_the_letters_typed_after_it(tmp_path):
    """F1 tells a served learner of ctrl+p, but the served bindings were built from the App class's
    own, without the palette's key that Textual adds when an app starts: ctrl+p did nothing."""
    for served in (False, True):
        async def check(app, pilot):
            editor = app.query_one("#editor", TextArea)
            editor.load_text("")
            post(app, T("ab"), "ctrl+p", T("watch"))
            await until(pilot, lambda: type(app.screen).__name__ == "CommandPalette", 10, "the palette")
            await settle(pilot)
            assert editor.text == "ab"
            assert app.screen.query_one("Input").value == "watch"

        run(check, tmp_path / str(served), served=served)


def test_a_reset_answered_at_once_keeps_the_letters_typed_before_it_in_the_backup(tmp_path):
    """F9 and y read before the editor's Changed message reached the app: the backup was the file
    as last saved, without the letters typed just before."""
    async def check(app, pilot):
        post(app, "ctrl+end", T("# mine"), "f9", "y")
        await until(pilot, lambda: list((tmp_path / "code").glob("map.py.bak-*")), 20, "the backup")
        backup, = (tmp_path / "code").glob("map.py.bak-*")
        assert backup.read_text().endswith("# mine")

    run(check, tmp_path)


def test_the_command_palettes_box_keeps_the_order_too(tmp_path):
    """The palette's box is Textual's own Input: its backspace and arrows ran from the app's queue,
    after the letters typed behind them (`watx`, backspace, `ch` searched for `watxc`)."""
    async def check(app, pilot):
        post(app, "ctrl+p")
        await until(pilot, lambda: type(app.screen).__name__ == "CommandPalette", 10, "the palette")
        await settle(pilot)
        post(app, T("watx"), "backspace", T("ch"), "left", "left", "backspace", T("c"))
        await settle(pilot)
        assert app.screen.query_one("Input").value == "wacch"

    run(check, tmp_path)


def test_letters_typed_right_after_a_click_on_the_code_tab_land_in_the_code(tmp_path):
    """At 80x24 the panes are tabs; a click on one switched the pane from the tab's message, after
    the letters typed right behind the click had gone to the pane before (and said press ctrl+e)."""
    async def check(app, pilot):
        editor = app.query_one("#editor", TextArea)
        editor.load_text("")
        app.action_pane("lesson")
        await settle(pilot)
        tab = app.query_one("#tab-code").region
        for event in (events.MouseDown, events.MouseUp):
            app.post_message(event(None, tab.x + 1, tab.y, 0, 0, 1, False, False, False,
                                   screen_x=tab.x + 1, screen_y=tab.y))
        post(app, T("abc"))
        await settle(pilot)
        assert editor.text == "abc" and app._switcher().active == "tab-code"

    run(check, tmp_path, size=(80, 24))
