"""No classic reference has a cut line in the editor at 80x24, 120x40 or 200x50.

At 120x40 the editor used to be 42 columns, so code lines were cut at about 36 characters. The
code pane now takes the columns its longest line needs, and the content keeps lines to 55
characters (tests/content/test_widths.py); this checks the two meet in the drawn screen.
"""

import asyncio

import pytest
from textual.widgets import TextArea

from tutor.app.app import make_app
from tutor.puzzles import load_catalog
from warm_runners import app_runner

CATALOG = load_catalog()
CLASSIC = next(t for t in CATALOG.tracks if t.id == "classic").puzzles


def _screen(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


@pytest.mark.e2e  # every classic reference drawn and scrolled at three sizes: 15 to 26 s each
@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_every_classic_reference_shows_whole_lines_in_the_editor(tmp_path, size):
    cut = []

    async def main():
        app = make_app(data_dir=tmp_path, backend="sim", seed=1, repeatable=True, runner=app_runner())
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            for pid in CLASSIC:
                app.load_puzzle(pid)
                await pilot.press("ctrl+e")
                editor = app.query_one("#editor", TextArea)
                editor.load_text(CATALOG.get(pid).reference)
                app._fit_code_pane()
                await pilot.pause()
                room = editor.scrollable_content_region.width - editor.gutter_width
                lines = editor.text.splitlines()
                for row in range(0, len(lines), max(1, editor.scrollable_content_region.height - 1)):
                    editor.scroll_to(y=row, animate=False, immediate=True)
                    await pilot.pause()
                    drawn = "\n".join(_screen(app))
                    top = int(editor.scroll_y)
                    for line in lines[top: top + editor.scrollable_content_region.height]:
                        if line.strip() and line.rstrip() not in drawn:
                            cut.append(f"{pid}: {line!r} (room {room})")
                if max(map(len, lines)) > room:
                    cut.append(f"{pid}: {max(map(len, lines))} characters, {room} columns")

    asyncio.run(main())
    assert cut == [], "\n".join(cut)
