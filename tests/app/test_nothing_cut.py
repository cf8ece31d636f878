"""Nothing a learner needs is cut or covered, at the sizes learners use (issue 37, item 5).

Found at 120x40: the lesson was 21 columns, so a code block read `shared = cuda.shar`; the thread
pane's note stopped mid-sentence; F3 cut the reference at 52 columns; the "Solved" toast sat on
the next puzzle's failures. At 80x24: the Threads tab's right column and the footer were cut.
Each test reads what the app drew (regions, rendered lines, the screen's text), not a layout
constant.
"""

import asyncio
import re

from markdown_it import MarkdownIt
from rich.cells import cell_len
from textual.content import Content
from textual.widgets import Footer, Static, TextArea
from textual.widgets._toast import Toast

from tutor.app.app import make_app
from tutor.app.widgets.arrays import ArrayView
from tutor.app.widgets.thread_detail import ThreadDetail
from tutor.app.widgets.thread_pane import EMPTY
from tutor.app.widgets.verdict import VerdictView
from tutor.puzzles import load_catalog
from waiting import until
from warm_runners import app_runner

CATALOG = load_catalog()


def run_app(check, tmp_path, size=(120, 40), puzzle="map"):
    """The app as a learner meets it, toasts included (Textual's tests leave them out by default)."""
    async def main():
        app = make_app(data_dir=tmp_path / f"{size[0]}x{size[1]}", backend="sim", seed=1, puzzle=puzzle,
                       repeatable=True, runner=app_runner())
        async with app.run_test(size=size, notifications=True) as pilot:
            await pilot.pause()
            await check(app, pilot)

    asyncio.run(main())


def screen_lines(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def drawn_in(app, region) -> str:
    """The text the screen shows inside `region`, its rows joined by spaces."""
    rows = screen_lines(app)[region.y:region.bottom]
    return " ".join(row[region.x:region.right].strip() for row in rows)


async def run_code(app, pilot, code: str):
    app.query_one("#editor", TextArea).load_text(code)
    app.last_result = None
    await pilot.press("ctrl+r")
    await until(pilot, lambda: app.last_result is not None, what="the run to finish")
    await app.workers.wait_for_complete()
    await pilot.pause()
    return app.last_result


def without_barrier(pid: str) -> str:
    return CATALOG.get(pid).reference.replace("    cuda.syncthreads()\n", "")


# -- the lesson -----------------------------------------------------------------------------------
def test_at_120x40_every_line_of_every_lessons_code_blocks_is_drawn_whole(tmp_path):
    """Every puzzle's lesson, each code block scrolled into view: each of its lines is on screen as
    written, and nothing of the lesson or of a block hides to the right."""
    async def check(app, pilot):
        cut = []
        scroll = app.query_one("#lesson-scroll")
        for pid in CATALOG.ids():
            app.load_puzzle(pid)
            blocks = [t.content.rstrip() for t in MarkdownIt("commonmark").parse(CATALOG.get(pid).lesson)
                      if t.type in ("fence", "code_block")]
            await until(pilot, lambda: [f.code for f in scroll.fences()] == blocks, what=f"{pid}'s lesson drawn")
            await pilot.pause()
            if scroll.max_scroll_x:
                cut.append(f"{pid}: the lesson scrolls sideways by {scroll.max_scroll_x}")
            for fence in scroll.fences():
                scroll.scroll_to_widget(fence, animate=False, immediate=True)
                await pilot.pause()
                if fence.max_scroll_x:
                    cut.append(f"{pid}: a code block hides {fence.max_scroll_x} columns")
                shown = drawn_in(app, fence.region)
                cut += [f"{pid}: {line.strip()!r}" for line in fence.code.splitlines() if line.strip() not in shown]
        assert cut == [], "\n".join(cut)

    run_app(check, tmp_path)


def test_the_shared_memory_line_is_whole_at_120x40(tmp_path):
    """The line the issue quotes, `shared = cuda.shar`, read whole on screen."""
    async def check(app, pilot):
        await until(pilot, lambda: app.query_one("#lesson-scroll").fences(), what="the lesson")
        fence = next(f for f in app.query_one("#lesson-scroll").fences() if "cuda.shared.array" in f.code)
        app.query_one("#lesson-scroll").scroll_to_widget(fence, animate=False, immediate=True)
        await pilot.pause()
        assert "shared = cuda.shared.array(TPB, numba.float32)" in "\n".join(screen_lines(app))
        assert app.query_one("#lesson").region.width >= 50

    run_app(check, tmp_path, puzzle="shared")


def test_code_too_wide_for_its_block_wraps_and_marks_where_a_line_goes_on(tmp_path):
    """In a terminal just over the tabs' width, the block is narrower than its code: the code
    wraps (each part under the first marked) and a drawing keeps its lines, scrolling sideways."""
    from tutor.app.widgets.lesson import CONTINUED, LessonFence

    async def check(app, pilot):
        scroll = app.query_one("#lesson-scroll")
        await until(pilot, lambda: scroll.fences(), what="the lesson")
        code = next(f for f in scroll.fences() if "cuda.shared.array" in f.code)
        drawing = next(f for f in scroll.fences() if f.code.startswith("block 0"))
        await pilot.pause()
        assert isinstance(code, LessonFence) and code.wraps and not drawing.wraps
        label = code.query_one("#code-content")
        rows = str(label.render()).splitlines()
        assert code.max_scroll_x == 0 and max(map(cell_len, rows)) <= label.content_region.width
        assert any(row.startswith(CONTINUED) for row in rows)
        assert "".join(r.removeprefix(CONTINUED) for r in rows) == "shared = cuda.shared.array(TPB, numba.float32)"
        assert drawing.max_scroll_x > 0  # a picture is never folded: it scrolls

    run_app(check, tmp_path, size=(110, 40), puzzle="shared")


def test_a_code_block_restyled_without_its_label_does_not_stop_the_app(tmp_path):
    """CI caught it at 80x24: a puzzle switch removes the old lesson's blocks while focus leaves
    them; the restyle that follows reached a block whose label was already gone, and the app died
    with NoMatches on '#code-content'."""
    async def check(app, pilot):
        scroll = app.query_one("#lesson-scroll")
        await until(pilot, lambda: scroll.fences(), what="the lesson")
        fence = next(f for f in scroll.fences() if f.wraps)
        await fence.query_one("#code-content").remove()
        fence._folded_at = 0
        fence.notify_style_update()  # what a blur or a theme change does
        fence.on_resize()
        await pilot.pause()
        assert app.is_running

    run_app(check, tmp_path, size=(80, 24), puzzle="shared")


def test_fold_breaks_after_a_space_and_keeps_the_colours():
    from tutor.app.widgets.lesson import CONTINUED, fold

    line = Content("x = alpha + beta + gamma").stylize("bold", 4, 9)
    rows = fold(line, 12).split("\n")
    assert [r.plain for r in rows] == ["x = alpha + ", CONTINUED + "beta + ", CONTINUED + "gamma"]
    assert rows[0].spans and rows[0].spans[0].style == "bold"
    assert fold(Content("short"), 12).plain == "short"


# -- the thread pane's note -----------------------------------------------------------------------
def test_the_thread_panes_note_is_read_whole_at_every_size(tmp_path):
    for size in [(80, 24), (110, 40), (120, 40), (200, 50)]:
        async def check(app, pilot):
            await pilot.press("ctrl+g")
            await pilot.pause()
            header = app.query_one("#thread-pane-header", Static)
            assert re.sub(r"\s+", " ", drawn_in(app, header.region)) == EMPTY, size

        run_app(check, tmp_path, size=size)


# -- F3 -------------------------------------------------------------------------------------------
def test_f3_shows_every_line_of_both_codes_whole(tmp_path):
    """The learner's code and the reference, each in its own editor, none of their lines past the
    editor's right edge: at 120 columns one above the other, at 200 side by side."""
    for size, stacked in [((120, 40), True), ((200, 50), False), ((80, 24), True)]:
        async def check(app, pilot):
            app.store.record_run("dot", True)
            await pilot.press("f3")
            await until(pilot, lambda: type(app.screen).__name__ == "ReferenceScreen", what="the reference")
            await pilot.pause()
            for side in ("#mine", "#theirs"):
                editor = app.screen.query_one(side, TextArea)
                room = editor.scrollable_content_region.width - editor.gutter_width
                longest = max(map(len, editor.text.splitlines()))
                assert longest < room, (size, side, longest, room)
                assert editor.border_title in ("your code", "reference")
            assert app.screen.has_class("-stacked") == stacked, size

        run_app(check, tmp_path, size=size, puzzle="dot")


# -- toasts ---------------------------------------------------------------------------------------
def test_solving_says_so_in_the_verdict_and_no_toast_covers_the_next_puzzles_failures(tmp_path):
    for size in [(120, 40), (80, 24)]:
        async def check(app, pilot):
            result = await run_code(app, pilot, CATALOG.get("dot").reference)
            assert result.verdict.passed
            verdict = app.query_one(VerdictView)
            said = verdict.head_text
            app.notify("Watch mode on: runs a moment after you stop typing.", timeout=120)  # any notice
            await pilot.press("ctrl+n")
            await until(pilot, lambda: app.puzzle.id != "dot", what="the next puzzle")
            result = await run_code(app, pilot, without_barrier(app.puzzle.id))
            assert not result.verdict.passed
            await pilot.press("ctrl+e")
            await until(pilot, lambda: list(app.screen.query(Toast)), what="the toast drawn")
            await pilot.pause()
            for toast in app.screen.query(Toast):
                assert not toast.region.overlaps(verdict.region), (size, toast.region, verdict.region)
            assert "Solved Dot product!" in said and "(F3)" in said
            assert "Solved" not in verdict.head_text  # it left with its puzzle

        run_app(check, tmp_path, size=size, puzzle="dot")


# -- 80x24: the footer and the threads tab ----------------------------------------------------------
def test_at_80x24_the_footer_shows_only_whole_keys_and_always_the_help(tmp_path):
    async def check(app, pilot):
        for pane in ("ctrl+g", "ctrl+e", "ctrl+l"):
            await pilot.press(pane)
            await pilot.pause(0.1)
            footer = app.query_one(Footer)
            keys = [k for k in footer.query("FooterKey") if k.display and k.parent.display]
            assert keys and all(k.region.right <= footer.region.right for k in keys), pane
            assert keys[-1].key == "f1" and "f1 Help" in screen_lines(app)[-1], pane

    run_app(check, tmp_path, size=(80, 24), puzzle="dot")


def test_at_80x24_the_threads_tab_right_column_holds_its_arrays_and_the_threads_story(tmp_path):
    """matmul_tiled's 8x8 tiles were 73 columns in a 37-column view; transpose's detail folded
    before its scrollbar came and lost two columns to it."""
    async def check(app, pilot):
        for pid in ("matmul_tiled", "transpose"):
            app.load_puzzle(pid)
            await run_code(app, pilot, without_barrier(pid))
            await pilot.press("ctrl+g")
            await pilot.pause()
            for view in (app.query_one(ArrayView), app.query_one(ThreadDetail)):
                assert view.virtual_size.width <= view.scrollable_content_region.width, (pid, type(view).__name__)
            assert any(re.match(r"\s*\d+\s+\d+", line) for line in app.query_one(ArrayView).lines_text()), pid

    run_app(check, tmp_path, size=(80, 24))
