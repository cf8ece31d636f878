"""The code editor draws control characters in a learner's file as symbols; the file's text is untouched.

Textual's TextArea draws a line's characters as they are, so a code file holding ESC ] 0 ; ... BEL
set the terminal's title, ESC [ 2 J cleared it, and C1 or bidi controls reached it too. These tests
read what the app would write to the terminal (the compositor's full frame) and look for them.
"""

import asyncio
import re

from textual.app import App

from tutor.app.app import make_app
from tutor.app.widgets.editor import CodeEditor
from tutor.store import Store
from warm_runners import app_runner

ATTACK = "x = '\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e'  # still mine\n"
TEXTUAL_OWN = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\d+;\d+H")  # Textual's colours and cursor moves, nothing else


def obeyed(app) -> list[str]:
    """The characters in the frame, other than Textual's own sequences, that a terminal would act on."""
    frame = TEXTUAL_OWN.sub("", app.screen._compositor.render_full_update().render_segments(app.console))
    return [c for c in ("\x1b", "\x07", "\x9b", "\u202e") if c in frame]


def test_control_characters_are_drawn_as_symbols_one_for_one_and_the_text_is_kept():
    class One(App):
        def compose(self):
            yield CodeEditor.code_editor(ATTACK, language="python")

    async def main():
        app = One()
        async with app.run_test(size=(80, 8)) as pilot:
            await pilot.pause()
            editor = app.query_one(CodeEditor)
            assert obeyed(app) == []
            assert editor.get_line(0).plain == "x = '\u241b]0;pwned\u2407\u241b[2J\ufffd31m\ufffd'  # still mine"
            assert editor.text == ATTACK  # what is saved and run: exactly what the file held

    asyncio.run(main())


def test_the_app_opens_a_code_file_with_escapes_without_obeying_them(tmp_path):
    Store(tmp_path).save_code("map", ATTACK)

    async def main():
        app = make_app(data_dir=tmp_path, backend="sim", seed=1, puzzle="map", runner=app_runner())
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert app.query_one("#editor", CodeEditor).text == ATTACK
            assert obeyed(app) == []

    asyncio.run(main())
    assert Store(tmp_path).load_code("map", "") == ATTACK  # nothing rewritten on the way out
