"""The hints panel shows a model's text: rendered as Markdown, never obeyed by the terminal."""

import asyncio

from test_editor import obeyed
from textual.app import App
from textual.widgets import Markdown, Static

from tutor.ai.hints import HintOutcome
from tutor.app.widgets.hints import HintsPanel

TITLE, CLEAR = "\x1b]0;pwned\x07", "\x1b[2J"
LINK = "\x1b]8;;https://evil.example\x1b\\click me\x1b]8;;\x1b\\"


class PanelApp(App):
    def compose(self):
        yield HintsPanel()


def test_a_streamed_then_finished_ai_hint_with_escapes_is_shown_escaped(catalog):
    async def main():
        app = PanelApp()
        async with app.run_test(size=(100, 30)) as pilot:
            panel = app.query_one(HintsPanel)
            panel.show_puzzle(catalog.get("map"), 0)
            panel.begin_ai(1, "tiny")
            await pilot.pause()
            for piece in ["Look at line 7 ", TITLE[:1], TITLE[1:], " ", CLEAR, " ", LINK, " [link=https://x]y[/link]"]:
                panel.stream(piece)  # each escape arrives cut from the rest of its sequence
            await pilot.pause()
            assert obeyed(app) == []
            streamed = panel.query_one("#hints-text", Markdown).source
            assert "Look at line 7 \\x1b]0;pwned\\x07 \\x1b[2J \\x1b]8;;https://evil.example" in streamed
            panel.status(f"withheld {TITLE}")
            await pilot.pause()
            assert "withheld \\x1b]0;pwned\\x07" in str(panel.query_one("#hints-title", Static).render())
            panel.finish_ai(HintOutcome(1, f"Whole hint {TITLE}{CLEAR} [link=https://x]y[/link]", "ai"))
            await pilot.pause()
            assert obeyed(app) == []
            shown = panel.query_one("#hints-text", Markdown)
            assert "Whole hint \\x1b]0;pwned\\x07\\x1b[2J [link=https://x]y[/link]" in shown.source
            assert shown._open_links is False  # a model's link is not opened by a click (no public getter)

    asyncio.run(main())


def test_an_authored_fallback_note_quoting_a_server_error_is_shown_escaped(catalog):
    async def main():
        app = PanelApp()
        async with app.run_test(size=(100, 30)) as pilot:
            panel = app.query_one(HintsPanel)
            panel.show_puzzle(catalog.get("map"), 0)
            panel.begin_ai(1, "tiny")
            await pilot.pause()
            panel.finish_ai(HintOutcome(1, "authored", "authored", note=f"server said {CLEAR}[b]no[/b]"))
            await pilot.pause()
            assert obeyed(app) == []
            assert "server said \\x1b[2J[b]no[/b]" in str(panel.query_one("#hints-title", Static).render())

    asyncio.run(main())
