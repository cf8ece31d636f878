"""Screenshots of the main screen, compared with stored ones: passed and failed at 120x40, passed
at 200x50, and the small layout at 80x24 (a new puzzle on its lesson, and the code tab after a
run; tests/app/test_code_fits.py checks every classic reference's lines whole at all three). Then
each view a learner reads, at 80x24, 120x40 and 200x50: a lesson with a code block, the failure
list, the thread grid, the memory counters and F3's reference (tests/app/test_nothing_cut.py
asserts what these show: nothing cut, no toast on a verdict). Made repeatable: a fixed seed, a
fresh data folder, no cursor blink.

After an intended change of the look: pytest tests/app/test_snapshots.py --snapshot-update"""

import pytest
from textual.widgets import TextArea

from tutor.app.app import make_app
from tutor.puzzles import load_catalog
from waiting import until
from warm_runners import app_runner

CATALOG = load_catalog()
FAILING_DOT = CATALOG.get("dot").reference.replace("    cuda.syncthreads()\n", "")


def _app(tmp_path, puzzle="dot"):
    return make_app(data_dir=tmp_path, backend="sim", seed=1, puzzle=puzzle, repeatable=True, runner=app_runner())


async def _settled(pilot, limit: int = 60) -> None:
    """Until four frames 50 ms apart draw the same text: on a busy machine a pane's height (the
    grid's, which follows its content) can still be changing when the run's verdict is drawn."""
    last, same = None, 0
    for _ in range(limit):
        await pilot.pause(0.05)
        now = "\n".join(strip.text for strip in pilot.app.screen._compositor.render_strips())
        same = same + 1 if now == last else 0
        if same >= 3:  # 150 ms without a change
            return
        last = now


def _run_with(code: str):
    async def run_before(pilot):
        app = pilot.app
        editor = app.query_one("#editor", TextArea)
        editor.cursor_blink = False
        editor.load_text(code)
        app.last_result = None
        await pilot.press("ctrl+r")
        await until(pilot, lambda: app.last_result is not None, what="the run to finish")
        await app.workers.wait_for_complete()
        await pilot.pause()  # the verdict drawn
        # the thread pane's legend takes its colours from its styles a frame later: on a busy
        # machine one snapshot in a few caught it in plain text
        await pilot.pause(0.1)
        await _settled(pilot)

    return run_before


def test_main_screen_passed(snap_compare, tmp_path):
    assert snap_compare(_app(tmp_path), terminal_size=(120, 40),
                        run_before=_run_with(CATALOG.get("dot").reference))


def test_main_screen_failed(snap_compare, tmp_path):
    assert snap_compare(_app(tmp_path), terminal_size=(120, 40), run_before=_run_with(FAILING_DOT))


def test_small_layout(snap_compare, tmp_path):
    async def still(pilot):
        pilot.app.query_one("#editor", TextArea).cursor_blink = False
        await pilot.pause()

    assert snap_compare(_app(tmp_path, "map"), terminal_size=(80, 24), run_before=still)


def test_wide_layout_passed(snap_compare, tmp_path):
    assert snap_compare(_app(tmp_path), terminal_size=(200, 50),
                        run_before=_run_with(CATALOG.get("dot").reference))


def test_small_layout_code_tab_after_a_run(snap_compare, tmp_path):
    async def run_on_code_tab(pilot):
        await pilot.press("ctrl+e")
        await _run_with(CATALOG.get("map").reference)(pilot)

    assert snap_compare(_app(tmp_path, "map"), terminal_size=(80, 24), run_before=run_on_code_tab)


SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40"), pytest.param((200, 50), id="200x50")]


async def _still(pilot):
    pilot.app.query_one("#editor", TextArea).cursor_blink = False
    await pilot.pause()


@pytest.mark.parametrize("size", [s for s in SIZES if s.id != "80x24"])
def test_lesson_with_a_code_block(snap_compare, tmp_path, size):
    """shared's lesson at its python block (at 80x24: test_small_layout, map's lesson)."""
    async def at_the_block(pilot):
        await _still(pilot)
        scroll = pilot.app.query_one("#lesson-scroll")
        await until(pilot, lambda: scroll.fences(), what="the lesson")
        scroll.scroll_to_widget(scroll.fences()[0], animate=False, immediate=True, top=True)
        await pilot.pause()

    assert snap_compare(_app(tmp_path, "shared"), terminal_size=size, run_before=at_the_block)


@pytest.mark.parametrize("size", [s for s in SIZES if s.id != "120x40"])
def test_failure_list(snap_compare, tmp_path, size):
    """The failures of a run, the list focused (at 120x40: test_main_screen_failed)."""
    async def failed(pilot):
        await pilot.press("ctrl+e")  # at 80x24 the code tab, which holds the verdict
        await _run_with(FAILING_DOT)(pilot)
        pilot.app.query_one("#verdict-list").focus()
        await _settled(pilot)

    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=failed)


@pytest.mark.parametrize("size", SIZES)
def test_thread_grid(snap_compare, tmp_path, size):
    async def on_the_grid(pilot):
        await _run_with(FAILING_DOT)(pilot)
        await pilot.press("ctrl+g")
        await _settled(pilot)

    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=on_the_grid)


@pytest.mark.parametrize("size", SIZES)
def test_memory_counters(snap_compare, tmp_path, size):
    async def on_the_counters(pilot):
        await _run_with(CATALOG.get("dot").reference)(pilot)
        await pilot.press("ctrl+g", "slash")
        await _settled(pilot)

    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=on_the_counters)


@pytest.mark.parametrize("size", SIZES)
def test_reference_f3(snap_compare, tmp_path, size):
    async def reference(pilot):
        await _still(pilot)
        pilot.app.store.record_run("dot", True)
        await pilot.press("f3")
        await until(pilot, lambda: type(pilot.app.screen).__name__ == "ReferenceScreen", what="the reference")
        for editor in pilot.app.screen.query(TextArea):
            editor.cursor_blink = False
        await pilot.pause()

    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=reference)
