"""The facilitator's live view (`gpu-tutor room DIR`) against what a participant or a broken folder can
put in front of it: puzzle ids that are markup or listed twice (each crashed the view), a room of
hundreds of unreadable files (the problems view drew every one, every second), a kernel of twenty
thousand lines (13 s to open) or with a U+2028 that drew a second line and moved the failing mark."""

from __future__ import annotations

import json

from rich.text import Text

from tests.app.test_room_view import rendered, run, view
from tests.workshop.test_room_attacks import RACE, export, record
from tutor.app.screens.misconception import MAX_LINES, MAX_WIDTH, marked_code
from tutor.app.widgets.room_grid import LearnerGrid
from textual.widgets import Static


def test_puzzle_ids_that_are_markup_or_listed_twice_are_columns_shown_as_their_text(tmp_path):
    folder = tmp_path / "exports"
    export(folder, "ada", [record("dot", last_failure=RACE), record("[/]", last_failure={**RACE, "kind": "[/]"})],
           workshop={"title": "[/]", "puzzles": ["dot", "[/]", "[b]x[/b]", "dot"]})

    async def check(app, pilot):
        grid = app.query_one("#grid", LearnerGrid)
        assert [str(c.label) for c in grid.columns.values()] == ["Learner", "dot", "[/]", "[b]x[/b]", "Solved",
                                                                 "Stuck"]
        assert grid.cell_text("ada", "[/]").startswith("✗ [/]")

    run(view(folder), check)


def test_a_room_of_hundreds_of_problems_shows_the_first_two_hundred_and_how_many_more(tmp_path):
    folder = tmp_path / "exports"
    export(folder, "ada", [record("dot", last_failure=RACE)])
    for n in range(300):
        (folder / f"broken-{n:03d}.json").write_text("{")

    async def check(app, pilot):
        lines = rendered(app.query_one("#problem-list", Static)).splitlines()
        assert len(lines) == 201, len(lines)
        assert lines[0].startswith(f"• {folder / 'broken-000.json'}: is not valid JSON")
        assert lines[-1] == "… and 100 more (the first 200 are shown)"
        assert app.query_one("#views").get_tab("problems").label_text == "Problems (300)"

    run(view(folder), check)


def test_a_kernel_of_twenty_thousand_lines_shows_the_lines_around_its_failing_one():
    kernel = "x = 1\n" * 14_999 + "out[i] = a[i] + 1\n" + "y = 2\n" * 5_000
    shown, row = marked_code(kernel, 15_000, {})
    lines = shown.plain.split("\n")
    assert len(lines) == MAX_LINES + 2, len(lines)
    assert lines[row] == "▶ 15000 │ out[i] = a[i] + 1"
    assert lines[0].endswith("… lines 1-14899 not shown") and lines[-1].endswith("… lines 15300-20000 not shown")
    shown, row = marked_code("# " + "x" * 250_000 + "\nout[i] = 1\n", 2, {})
    assert shown.plain.split("\n")[0].endswith("x" * (MAX_WIDTH - 2) + "… (249702 more characters)")
    assert shown.plain.split("\n")[row] == "▶ 2 │ out[i] = 1"


def test_a_line_separator_or_zero_width_space_in_a_kernel_shows_and_does_not_move_the_mark():
    kernel = "def kernel(out, a):\n    # a note\u2028    out[0] = 1\n    i = 0\u200b\n    out[i] = a[i] + 1\n"
    shown, row = marked_code(kernel, 4, {})
    assert isinstance(shown, Text)
    assert shown.plain.split("\n") == ["  1 │ def kernel(out, a):", "  2 │     # a note\\u2028    out[0] = 1",
                                       "  3 │     i = 0\\u200b", "▶ 4 │     out[i] = a[i] + 1"]
    assert row == 3


THE_RACE = "race on `cache` between `cache[…] = a[…] * b[…]` and `_ += cache[…]`"


def test_a_learner_who_fixes_their_mistake_leaves_it_on_the_next_reading(tmp_path):
    folder = tmp_path / "exports"
    export(folder, "ada", [record("dot", last_failure=RACE)])
    export(folder, "bo", [record("dot", last_failure=RACE)])

    async def check(app, pilot):
        from waiting import until

        assert rendered_mistakes(app) == [f"dot: 2 of 2 learners, {THE_RACE}"]
        reads = app.reads
        export(folder, "bo", [record("dot", solved=True, attempts=2, last_failure=None)])
        await until(pilot, lambda: app.reads >= reads + 2, what="two more readings")
        assert rendered_mistakes(app) == [f"dot: 1 of 2 learners, {THE_RACE}"]
        assert json.loads((folder / "bo.json").read_text())["puzzles"][0]["solved"]

    run(view(folder), check)


def rendered_mistakes(app) -> list[str]:
    from textual.widgets import OptionList

    listed = app.query_one("#mistakes", OptionList)
    return [str(listed.get_option_at_index(n).prompt) for n in range(listed.option_count)]
