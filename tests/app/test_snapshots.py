"""Screenshots of the main screen, compared with stored ones: passed and failed at 120x40, passed
at 200x50, and the small layout at 80x24 (a new puzzle on its lesson, and the code tab after a
run; tests/app/test_code_fits.py checks every classic reference's lines whole at all three). Made repeatable: a fixed seed, a fresh data folder, no cursor blink.

After an intended change of the look: pytest tests/app/test_snapshots.py --snapshot-update"""

from textual.widgets import TextArea

from tutor.app.app import make_app
from tutor.puzzles import load_catalog
from waiting import until
from warm_runners import app_runner

CATALOG = load_catalog()
FAILING_DOT = CATALOG.get("dot").reference.replace("    cuda.syncthreads()\n", "")


def _app(tmp_path, puzzle="dot"):
    return make_app(data_dir=tmp_path, backend="sim", seed=1, puzzle=puzzle, repeatable=True, runner=app_runner())


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
