"""The thread pane in a real Textual app, fed real runs from our simulator.

Each test mounts a ThreadPane in a small app, shows the runs of a check, then drives it with the
keys and clicks a learner would use and reads back what the widgets draw. (pytest-asyncio is not a
dependency, so each test runs its coroutine with asyncio.run.)
"""

import asyncio
import re
import textwrap
from functools import lru_cache

import numpy as np
from textual.app import App, ComposeResult
from textual.widgets import Static, TextArea

from tutor.app.widgets.arrays import ArrayView
from tutor.app.widgets.grid import GLYPHS, ThreadGrid
from tutor.app.widgets.thread_detail import ThreadDetail
from tutor.app.widgets.thread_pane import ThreadPane
from tutor.engine.judge import check_sim, simulate
from tutor.engine.verdict import ConfigRun
from tutor.engine.views.gridmodel import fmt_value
from sample_kernels import DOT_NO_BARRIER
from waiting import until
from tutor.puzzles import LaunchConfig, load_catalog

SIZE = (120, 40)


BIG_MAP = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a, size):
        i = cuda.grid(1)
        if i < size:
            out[i] = a[i] + 10
    """


class PaneApp(App):
    def compose(self) -> ComposeResult:
        yield ThreadPane()


@lru_cache(maxsize=None)
def runs(pid, source=None):
    puzzle = load_catalog().get(pid)
    src = textwrap.dedent(source).lstrip("\n") if source else puzzle.reference
    return tuple(check_sim(puzzle, src, "kernel.py", seed=1, compile=False).runs)


@lru_cache(maxsize=None)
def big_run():
    n = 4096
    a = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    trace, failures = simulate(textwrap.dedent(BIG_MAP).lstrip("\n"), (64,), (64,),
                               [("out", out), ("a", a), ("size", n)])
    config = LaunchConfig("4096 elements, 64 blocks", (64,), (64,), {"out": (n,), "a": (n,)}, {"size": n})
    return ConfigRun(config, {"a": a, "size": n}, a + 10, out, trace, failures)


def drive(test, run_list):
    """Mount the pane, show the runs, then hand (pilot, pane) to the test coroutine."""
    async def main():
        app = PaneApp()
        async with app.run_test(size=SIZE) as pilot:
            pane = app.query_one(ThreadPane)
            pane.show_runs(list(run_list))
            await pilot.pause()
            await test(pilot, pane)

    asyncio.run(main())


def visible_lines(widget) -> list[str]:
    """What the widget draws on screen, line by line (through its Line API)."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


def thread_glyphs(lines: list[str]) -> int:
    """Thread cells drawn: status glyphs inside block boxes."""
    return sum(ch in GLYPHS.values() for line in lines if "│" in line for ch in line)


def header_text(pane) -> str:
    return str(pane.query_one("#thread-pane-header").render())


# -- tests -------------------------------------------------------------------------------------------
def test_grid_draws_one_cell_per_thread():
    async def check(pilot, pane):
        grid = pane.grid
        assert isinstance(pane.app.focused, ThreadGrid)
        assert thread_glyphs(visible_lines(grid)) == 8
        assert sorted(grid.drawn_threads) == list(range(8)) and grid.hidden_blocks == 0
        assert "ok 8" in visible_lines(grid)[0]
        assert header_text(pane).startswith(
            "config 1 of 4: 8 elements · phase 0/1 · thread (0,) of block (0,)")

    drive(check, runs("dot"))


def test_grid_lays_out_2d_blocks_by_x_and_y():
    async def check(pilot, pane):
        lines = [line for line in visible_lines(pane.grid) if "│" in line]
        assert thread_glyphs(lines) == 9  # one 3x3 block
        assert len(lines) == 3 and all(line.count("●") == 3 for line in lines)
        await pilot.press("down")
        assert pane.grid.selected == 3  # thread (0, 1)
        await pilot.press("right", "right", "right")
        assert pane.grid.selected == 5  # stops at the block's edge: no block to the right
        await pilot.pause()
        assert "thread (2, 1) of block (0, 0)" in header_text(pane)

    drive(check, runs("matmul")[:1])


def test_arrow_keys_select_threads_and_the_detail_follows():
    async def check(pilot, pane):
        grid, detail = pane.grid, pane.query_one(ThreadDetail)
        assert grid.selected == 0
        assert any("a[0] = " in line for line in detail.lines_text())
        await pilot.press("right", "right")
        await pilot.pause()
        assert grid.selected == 2
        text = detail.lines_text()
        assert text[0].startswith("thread (2,) of block (0,)")
        rows = [line.strip("▸ ") for line in text[1:] if "barrier" not in line]
        events = pane.model.events_of(2)
        assert [row.split(None, 2)[:2] for row in rows] == [["line", str(e.line)] for e in events]
        assert [row.split(None, 2)[2] for row in rows] == \
            [e.text().split("  ", 1)[1].split("  line")[0] for e in events]
        assert "thread (2,) of block (0,)" in header_text(pane)
        await pilot.press("left", "left", "left")  # no block before block 0: stays on thread 0
        await pilot.pause()
        assert grid.selected == 0
        assert visible_lines(grid)[3].startswith("│[●] ●")

    drive(check, runs("dot"))


def test_phase_step_shows_the_values_written_in_that_phase():
    async def check(pilot, pane):
        grid, arrays, detail = pane.grid, pane.query_one(ArrayView), pane.query_one(ThreadDetail)
        model = pane.model
        final = fmt_value(float(model.run.expected[0]), compact=True)

        def out_row():
            lines = arrays.lines_text()
            return lines[lines.index(next(x for x in lines if x.startswith("out (output)"))) + 1]

        assert out_row().split() == ["[0]", "0"]  # out is written in phase 1
        lines = detail.lines_text()
        before_barrier = lines[1:lines.index(next(x for x in lines if "barrier" in x))]
        assert detail.current_rows() == [row for row in before_barrier if row.startswith("▸ line")]
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert grid.phase == 1
        assert out_row().split() == ["[0]", final]
        assert "phase 1/1" in header_text(pane)
        assert re.match(r"▸ line \d+ +write  out\[0\]", detail.current_rows()[-1])
        await pilot.press("right_square_bracket")  # already the last phase
        assert grid.phase == 1
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert grid.phase == 0 and out_row().split() == ["[0]", "0"]
        grid.play_interval = 0.05
        await pilot.press("space")  # plays to the last phase, then stops
        await until(pilot, lambda: not grid.playing, what="the play to stop")
        assert grid.phase == 1
        assert out_row().split() == ["[0]", final]

    drive(check, runs("dot"))


def test_race_threads_show_the_raced_status():
    async def check(pilot, pane):
        lines = visible_lines(pane.grid)
        assert "raced 8" in lines[0]
        cells = [ch for line in lines if "│" in line for ch in line if ch in GLYPHS.values()]
        assert cells == [GLYPHS["raced"]] * 8
        assert "took part in a race" in header_text(pane)

    drive(check, runs("dot", DOT_NO_BARRIER))


def test_click_selects_a_thread():
    async def check(pilot, pane):
        grid = pane.grid
        lines = visible_lines(grid)
        y = next(i for i, line in enumerate(lines) if "│" in line)
        x = [i for i, ch in enumerate(lines[y]) if ch in GLYPHS.values()][5]
        await pilot.click(ThreadGrid, offset=(x, y))
        await pilot.pause()
        assert grid.selected == 5
        assert pane.query_one(ThreadDetail).lines_text()[0].startswith("thread (5,) of block (0,)")

    drive(check, runs("dot"))


def test_config_keys_switch_configs():
    async def check(pilot, pane):
        assert pane.config_index == 0
        await pilot.press("full_stop")
        await pilot.pause()
        assert pane.config_index == 1 and header_text(pane).startswith("config 2 of 4: 4 elements")
        await pilot.press("comma", "comma")
        await pilot.pause()
        assert pane.config_index == 3 and header_text(pane).startswith("config 4 of 4")

    drive(check, runs("dot"))


def test_a_4096_thread_launch_draws_only_some_blocks():
    run = big_run()

    async def check(pilot, pane):
        grid = pane.grid
        assert pane.model.n_threads == 4096 and pane.model.n_blocks == 64
        assert 0 < len(grid.drawn_threads) < 4096 // 4 and grid.hidden_blocks > 0
        layout = grid.lines_text()
        assert any("52 blocks hidden" in line for line in layout)
        assert len(layout) < 120  # the grid scrolls through a bounded layout
        assert grid.region.width <= pane.region.width and grid.region.height <= pane.region.height
        assert thread_glyphs(visible_lines(grid)) > 0
        # selecting a thread in a hidden block brings its block into view
        pane.select((30,), (5,))
        await pilot.pause()
        assert grid.selected == 30 * 64 + 5 and grid.selected in grid.drawn_threads
        assert sum("hidden" in line for line in grid.lines_text()) == 2
        assert "thread (5,) of block (30,)" in header_text(pane)
        assert any("block (30,)" in line for line in visible_lines(grid))  # scrolled to it

    drive(check, [run])


def test_c_shows_the_configs_memory_counters_and_c_again_the_grid(tmp_path, catalog):
    """The counters come with the verdict (counted where the kernel ran); the pane only shows them."""
    from test_app import run_app, run_kernel

    async def check(app, pilot):
        app.load_puzzle("transpose")
        app.query_one("#editor", TextArea).load_text(catalog.get("transpose").reference)
        result = await run_kernel(app, pilot)
        assert result.verdict.passed
        pane = app.query_one(ThreadPane)
        await pilot.press("ctrl+g")  # the grid's pane: its keys, never the editor's letters
        await pilot.press("slash")
        await pilot.pause()
        shown = str(pane.query_one("#thread-pane-counters", Static).render())
        assert pane.has_class("-counters") and "sectors per request" in shown and "bank conflicts" in shown
        assert "No line moves more sectors than its bytes need" in shown  # one 4x4 tile: nothing wasted
        await pilot.press("full_stop")  # the next config: 6 x 9, ragged edges
        await pilot.pause()
        shown = str(pane.query_one("#thread-pane-counters", Static).render())
        assert "line 28 (`tile[ty, tx] = a[row, col]`): global load" in shown  # the costly line, with its code
        assert app.query_one("#editor", TextArea).text == catalog.get("transpose").reference  # no key reached it
        assert not pane.grid.region.width  # the grid gives its room to the counters
        assert app.query_one("#editor", TextArea).text == catalog.get("transpose").reference
        await pilot.press("slash")
        await pilot.pause()
        assert not pane.has_class("-counters") and pane.grid.region.width

    run_app(check, tmp_path)


def test_a_narrow_panes_grid_is_as_high_as_its_lines_when_the_screen_lays_out_first():
    """In a narrow pane the grid's height is its lines'. Textual keeps a widget's box until the
    widget asks for a layout afresh, and an ask made while one is pending did not count. The app's
    empty pane gets a run: the grid, hidden, lays out at width 0 (8 lines) and asks; the screen
    lays out before the grid's idle (a busy machine), boxing it at 8 rows; the grid, resized to
    the pane's width, lays out 5 lines and asks again, uncounted, and kept 8 rows (one snapshot in
    a few). Here that order is forced: the screen's layout runs right after the run is shown."""
    async def main():
        app = PaneApp()
        async with app.run_test(size=(79, 40)) as pilot:
            pane = app.query_one(ThreadPane)
            await pilot.pause()
            assert pane.has_class("-empty") and pane.has_class("-narrow")
            pane.show_runs(list(runs("dot")))
            app.screen._refresh_layout()  # before the grid's idle, as on a busy machine
            for _ in range(10):
                await pilot.pause(0.02)
            grid = pane.grid
            assert len(grid.lines_text()) == 5
            assert grid.size.height == 5, f"{grid.size.height} rows for 5 lines"

    asyncio.run(main())
