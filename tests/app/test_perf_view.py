"""The performance lens in the app: the editor marks the costly lines of the config on show, the
marks follow their lines while the learner types and never touch the text, the counters view
lists the lines and shows one's lanes, enter puts the editor's cursor on it, and the roofline is
drawn below."""

import asyncio

from textual.app import App, ComposeResult
from textual.widgets import OptionList, Static

from test_app import run_app, run_kernel
from tutor.app.widgets.counters_view import CountersView
from tutor.app.widgets.editor import MARKS, CodeEditor, marks_of
from tutor.app.widgets.thread_pane import ThreadPane
from tutor.engine.analysis.counters import MARK_KINDS
from tutor.engine.analysis.roofline import NO_FLOPS

# Reads along a row of `a`, writes down a column of `out`: line 9 is uncoalesced on the ragged
# 6 x 9 config (config 2), whose rows do not fill whole sectors.
NAIVE_TRANSPOSE = '''from numba import cuda


@cuda.jit
def kernel(out, a, rows, cols):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if j < rows and i < cols:
        out[i, j] = a[j, i]
'''
MARKED = 8  # line 9's row


async def run_naive_on_config_2(app, pilot):
    app.load_puzzle("transpose")
    editor = app.query_one("#editor", CodeEditor)
    editor.load_text(NAIVE_TRANSPOSE)
    result = await run_kernel(app, pilot)
    await pilot.press("ctrl+g")  # the thread pane's keys
    await pilot.press("full_stop")  # config 2: 6 x 9, ragged
    await pilot.pause()
    return editor, result


def gutter(editor: CodeEditor, row: int) -> str:
    """What the editor draws for a document row (the view is at its top)."""
    return editor.render_line(row - editor.scroll_offset.y).text[:editor.gutter_width]


def legend(app) -> str:
    """The code pane's legend as drawn (its colours are markup)."""
    from textual.content import Content

    return Content.from_markup(app.query_one("#code-pane").border_subtitle or "").plain


def test_an_uncoalesced_line_is_marked_in_the_gutter_with_a_legend(tmp_path):
    async def check(app, pilot):
        editor, _ = await run_naive_on_config_2(app, pilot)
        assert [kind for kind, _ in editor.marks[MARKED]] == ["uncoalesced"]
        assert "global load of a: 3.3 sectors per request (ideal 1.3)" in editor.marks[MARKED][0][1]
        assert list(editor.marks) == [MARKED]
        assert gutter(editor, MARKED).rstrip() == " 9◆"  # the mark sits in the gutter's margin
        assert gutter(editor, MARKED - 1).rstrip() == " 8"
        assert legend(app) == "◆ uncoalesced · config 2/6 (/ in the thread pane: why)"
        assert editor.text == NAIVE_TRANSPOSE  # drawn, never written
        await pilot.press("comma")  # config 1: one 4 x 4 tile, two whole sectors: nothing to mark
        await pilot.pause()
        assert editor.marks == {} and legend(app) == ""

    run_app(check, tmp_path)


def test_typing_keeps_the_text_and_a_mark_follows_its_line_until_the_line_changes(tmp_path):
    async def check(app, pilot):
        editor, _ = await run_naive_on_config_2(app, pilot)
        await pilot.press("ctrl+e")
        editor.move_cursor((0, 0))
        await pilot.press(*"# x", "enter")  # a comment line above: the mark moves down with its line
        await pilot.pause()
        assert editor.text == "# x\n" + NAIVE_TRANSPOSE
        assert list(editor.marks) == [MARKED + 1] and gutter(editor, MARKED + 1).rstrip() == "10◆"
        editor.move_cursor((MARKED + 1, len(editor.document[MARKED + 1])))
        await pilot.press("space")  # the marked line itself changes: its counts were of the old line
        await pilot.pause()
        assert editor.text == "# x\n" + NAIVE_TRANSPOSE.replace("a[j, i]\n", "a[j, i] \n")
        assert editor.marks == {} and "◆" not in gutter(editor, MARKED + 1) and legend(app) == ""
        await pilot.press("ctrl+z")  # undone: the line is the one that ran again
        await pilot.pause()
        assert editor.text == "# x\n" + NAIVE_TRANSPOSE and list(editor.marks) == [MARKED + 1]

    run_app(check, tmp_path)


def test_the_counters_view_lists_the_lines_and_shows_a_lines_lanes(tmp_path):
    async def check(app, pilot):
        editor, _ = await run_naive_on_config_2(app, pilot)
        await pilot.press("slash")
        await pilot.pause()
        view = app.query_one(CountersView)
        lines = view.query_one(OptionList)
        assert app.focused is lines  # up/down and enter are the list's
        prompts = [str(lines.get_option_at_index(i).prompt) for i in range(lines.option_count)]
        assert prompts[0].startswith("◆ line   9  global load of a: 3.3 sectors/req (ideal 1.3)")
        assert prompts[1].startswith("◆ line   9  global store of out: 2.3 sectors/req (ideal 1.3)")
        detail = str(view.query_one("#counters-detail", Static).render())
        assert detail.startswith("line 9 (out[i, j] = a[j, i]), its costliest request per array:")
        assert "global load of a, warp 0 of block (1, 0), execution 1 of the line: 5 sectors for 16 lanes" in detail
        assert "  sector 0: lanes 0-3" in detail and "  sector 4: lanes 13-15" in detail
        roof = str(view.query_one("#counters-roofline", Static).render())
        assert roof.startswith("NVIDIA H200") and "FLOP/s over FLOP/byte" in roof and "┊" in roof
        assert NO_FLOPS in roof.replace("\n", " ")
        assert editor.text == NAIVE_TRANSPOSE and editor.cursor_location == (0, 0)  # no key reached it
        await pilot.press("pagedown")  # the view scrolls towards the roofline; the list keeps its line
        await pilot.pause()
        assert view.scroll_y > 0 and lines.highlighted == 0 and app.focused is lines

    run_app(check, tmp_path)


def test_enter_on_a_line_puts_the_editors_cursor_on_its_code_without_a_selection(tmp_path):
    async def check(app, pilot):
        editor, _ = await run_naive_on_config_2(app, pilot)
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        assert editor.cursor_location == (MARKED, 8)  # at the code, past the indentation
        assert editor.selected_text == "" and editor.text == NAIVE_TRANSPOSE
        assert app.focused is app.query_one(CountersView).query_one(OptionList)  # still browsing the lines

    run_app(check, tmp_path)


class PaneApp(App):
    def compose(self) -> ComposeResult:
        yield ThreadPane()


def test_the_roofline_places_the_kernel_when_the_puzzle_declares_its_flops(catalog):
    """The app hands the pane the puzzle's FLOPs per config; the picture then has the point."""
    from tutor.engine.judge import check_sim

    puzzle = catalog.get("matmul")
    result = check_sim(puzzle, puzzle.reference, "kernel.py", seed=1, compile=False)
    flops = [2.0 * run.config.scalars["size"] ** 3 for run in result.runs]

    async def main():
        app = PaneApp()
        async with app.run_test(size=(120, 60)) as pilot:
            pane = app.query_one(ThreadPane)
            pane.show_runs(result.runs, [c.counters for c in result.verdict.configs], puzzle.reference, flops)
            await pilot.pause()
            pane.action_counters()
            await pilot.pause()
            roof = str(pane.query_one("#counters-roofline", Static).render())
            assert "● this kernel:" in roof and "memory-bound: at most" in roof
            assert NO_FLOPS not in roof.replace("\n", " ")

    asyncio.run(main())


def test_marks_from_the_child_are_data_a_forged_one_is_dropped_and_the_kinds_agree():
    assert list(MARKS) == list(MARK_KINDS)
    good = {"line": 3, "kind": "conflicted", "text": "shared load of t: 2 bank conflicts\x1b[2J"}
    forged = [good, {"line": "3", "kind": "conflicted", "text": ""}, {"line": 0, "kind": "divergent", "text": ""},
              {"line": 4, "kind": "rm -rf", "text": ""}, {"line": True, "kind": "divergent", "text": ""}, 7]
    [(line, kind, text)] = marks_of({"marks": forged})
    assert (line, kind) == (3, "conflicted") and "\x1b" not in text and text.startswith("shared load of t")
    assert marks_of(None) == [] and marks_of({"marks": "x"}) == []


def test_the_help_lists_the_counters_keys_and_the_gutter_marks():
    from tutor.app.screens.help import THREAD_KEYS

    keys = dict(THREAD_KEYS)
    assert "Enter also puts the editor's cursor on it" in keys["up/down, Enter in the counters"]
    assert keys["◆ ■ ◐ in the gutter"].startswith("the config on show's costly lines: uncoalesced, bank")


def test_a_config_without_a_trace_says_so_and_the_keys_stay_in_the_pane(catalog):
    from dataclasses import replace

    from tutor.engine.judge import check_sim

    puzzle = catalog.get("transpose")
    result = check_sim(puzzle, puzzle.reference, "kernel.py", seed=1, compile=False)
    runs = [replace(run, trace=None) for run in result.runs]

    async def main():
        app = PaneApp()
        async with app.run_test(size=(120, 40)) as pilot:
            pane = app.query_one(ThreadPane)
            pane.show_runs(runs, [c.counters for c in result.verdict.configs], puzzle.reference)
            await pilot.pause()
            await pilot.press("slash")
            await pilot.pause()
            title = str(pane.query_one("#counters-lines-title", Static).render())
            assert title == "No trace was kept for this config, so its lines and roofline cannot be drawn."
            assert app.focused is pane.query_one(OptionList)
            await pilot.press("full_stop")
            await pilot.pause()
            assert pane.config_index == 1

    asyncio.run(main())
