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
