"""The facilitator's room attacked from both sides: what a participant can put into an export or a
progress file the facilitator reads (puzzle ids, names, failure summaries), and a room folder that
is broken or hostile (a learners/ that is a link, thousands of stray files). Each attack once fooled
the live view (tutor.workshop.live) or `gpu-tutor report` (tutor.workshop.report): a crash, a row the
facilitator would take for ours, a refresh of seconds, a folder followed to /."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tutor.engine.verdict import Failure
from tutor.store import Store, iso_time
from tutor.workshop.live import FAILING, LiveRoom
from tutor.workshop.misconceptions import failure_summary
from tutor.workshop.report import load_class, report_text
from tutor.workshop.report_html import report_html

NOW = 1_796_558_400.0


def record(pid: str, **fields) -> dict:
    return {"id": pid, "solved": False, "attempts": 1, "time_to_solve_s": None, "hint_levels_used": 0,
            "ai_hints_used": 0, "first_opened_at": iso_time(NOW - 600), "last_run_at": iso_time(NOW - 60), **fields}


def export(folder: Path, learner: str, puzzles: list[dict], *, name=None, workshop=None, current=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{learner}.json"
    path.write_text(json.dumps({"format": "gpu-tutor-progress", "version": 1, "exported_at": iso_time(NOW - 30),
                                "learner": {"id": learner, "name": name}, "workshop": workshop,
                                "current_puzzle": current, "puzzles": puzzles}))
    return path


RACE = {"kind": "race", "rule": None, "array": "cache", "line": 9, "shape": "cache[…] = a[…] * b[…]",
        "other_shape": "_ += cache[…]", "gist": "Thread (#,) of block (#,) writes shared array …[#]"}


def served_room(root: Path, puzzles: list[str], learners: int = 2) -> Path:
    (root / "learners").mkdir(parents=True)
    (root / "room.json").write_text(json.dumps({"title": "Sunday", "puzzles": puzzles}))
    for n in range(learners):
        store = Store(root / "learners" / f"s{n:02d}", clock=lambda: NOW)
        store.record_open("dot")
        store.record_run("dot", False, RACE)
    return root


# -- puzzle lists someone edited ---------------------------------------------------------------------


def test_a_puzzle_listed_twice_in_room_json_or_an_export_is_one_puzzle(tmp_path):
    room = served_room(tmp_path / "room", ["map", "dot", "map", "dot"])
    assert LiveRoom(room, clock=lambda: NOW).refresh().puzzles == ["map", "dot"]
    export(tmp_path / "exports", "ada", [record("dot", last_failure=RACE)],
           workshop={"title": "Sunday", "puzzles": ["dot", "map", "dot"]})
    picture = LiveRoom(tmp_path / "exports", clock=lambda: NOW).refresh()
    assert picture.puzzles == ["dot", "map"] and picture.problems == []
    assert load_class([tmp_path / "exports"]).learners[0].workshop_puzzles == ("dot", "map")


def test_a_room_json_whose_puzzles_are_all_odd_or_none_is_said_and_the_learners_puzzles_shown(tmp_path):
    for puzzles in (["../dot", "[/]", "", 3], []):
        room = served_room(tmp_path / f"room{len(puzzles)}", puzzles)
        picture = LiveRoom(room, clock=lambda: NOW).refresh()
        assert picture.puzzles == ["dot"], picture.puzzles  # was []: every learner in a grid of no puzzle
        assert picture.notes == [f"{room / 'room.json'} is missing or unreadable: each learner's opened puzzles "
                                 "are shown"]
        assert picture.misconceptions[0].describe(of=2).startswith("dot: 2 of 2 learners")


def test_an_export_of_thousands_of_puzzles_is_named_and_the_rest_of_the_room_is_read_at_once(tmp_path):
    folder = tmp_path / "exports"
    export(folder, "ada", [record("dot", last_failure=RACE)])
    export(folder, "huge", [record(f"p{n}", last_failure={**RACE, "shape": f"out[{n}] = 1"}) for n in range(5000)])
    export(folder, "wide", [record("dot")], workshop={"title": "x", "puzzles": [f"p{n}" for n in range(5000)]})
    started = time.monotonic()
    picture = LiveRoom(folder, clock=lambda: NOW).refresh()
    assert time.monotonic() - started < 5  # it took 9 s with 3 such files, on every refresh
    problems = {path.name: why for path, why in picture.problems}
    assert problems == {"huge.json": "puzzles: holds 5000 records, more than gpu-tutor has puzzles (at most 500)",
                        "wide.json": "workshop.puzzles: lists 5000 puzzles, more than any workshop has (at most 500)"}
    assert [r.id for r in picture.rows] == ["ada"] and picture.puzzles == ["dot"]
    assert picture.misconceptions[0].describe(of=1).startswith("dot: 1 of 1 learner, race on `cache`")


# -- what a failure summary, a name or a puzzle id can hold -------------------------------------------


def test_a_newline_in_an_edited_summary_name_or_puzzle_cannot_start_a_row_of_its_own_in_the_report(tmp_path):
    forged = "\n  dot     30 of 30  race on `x` FORGED"
    folder = tmp_path / "exports"
    export(folder, "ada", [record("dot", last_failure={**RACE, "shape": "cache[…] = 1" + forged, "gist": forged}),
                           record("map\nFORGED", last_failure=RACE)],
           name="Ada\nFORGED", current="dot\nFORGED", workshop={"title": "Sunday\nFORGED", "puzzles": ["dot"]})
    export(folder, "bo", [record("dot", last_failure={**RACE, "kind": "race\u2028FORGED"})])
    report = load_class([folder])
    text = report_text(report)
    assert "FORGED" in text and not [line for line in text.splitlines() if line.lstrip().startswith("FORGED")], text
    assert "dot     30 of 30" not in text.replace("\n", " ")  # the forged row is there as text, run into its cell
    page = report_html(report)
    assert "\nFORGED" not in page and "\u2028" not in page


def test_a_name_of_megabytes_is_cut_and_a_puzzle_id_of_thousands_of_characters_is_refused(tmp_path):
    """One export's name of 200,000 characters padded every row of the report's table to it: 10 MB."""
    folder = tmp_path / "exports"
    export(folder, "ada", [record("dot", last_failure=RACE)], name="N" * 200_000, current="dot")
    for n in range(29):
        export(folder, f"learner-{n:02d}", [record("dot", last_failure=RACE)], name=f"Learner {n:02d}")
    export(folder, "bo", [record("dot")], current="dot" * 50_000)
    export(folder, "cy", [record("x" * 5_000)])
    report = load_class([folder])
    assert {p.name: why[:60] for p, why in report.skipped} == {
        "bo.json": "current_puzzle: must be a puzzle id or null, not 'dotdotdotd",
        "cy.json": "puzzles[0]: not a puzzle record with an id (of at most 100 c"}
    assert all(len(why) < 200 for _, why in report.skipped)
    text = report_text(report)
    rows = [line for line in text.splitlines() if "0/1" in line]
    assert len(rows) == 30 and max(map(len, rows)) <= 120 and len(text) < 20_000
    assert "  " + "N" * 63 + "…  1/1" not in text and "  " + "N" * 63 + "…  0/1" in text
    assert len(report_html(report)) < 40_000


def test_a_zero_width_space_in_an_edited_summary_shows_and_so_reads_as_another_mistake(tmp_path):
    folder = tmp_path / "exports"
    export(folder, "ada", [record("dot", last_failure=RACE)])
    export(folder, "bo", [record("dot", last_failure={**RACE, "array": "cache\u200b"})])
    picture = LiveRoom(folder, clock=lambda: NOW).refresh()
    said = sorted(m.what() for m in picture.misconceptions)
    assert len(said) == 2 and said[0] != said[1]  # two groups that read alike would be a lie either way
    assert any("`cache\\u200b`" in what for what in said)
    assert "cache\\u200b" in report_text(load_class([folder]))


def test_a_failure_summary_keeps_what_a_compiler_says_on_one_line():
    f = Failure("compile_error", "Failed in cuda mode pipeline (step: nopython frontend)\nUnknown attribute 'x'\n\n"
                "File \"kernel.py\", line 7:", line=7)
    s = failure_summary([f], "x = 1\n" * 10)
    assert "\n" not in s["gist"] and s["gist"].startswith("Failed in cuda mode pipeline (step: nopython frontend) ")


def test_a_form_feed_or_line_separator_above_the_failing_line_does_not_move_it():
    """Python counts lines at \\n only; str.splitlines also splits at U+2028, U+0085 and a form feed, which
    put the summary on the line above the failing one (a comment: no shape) or on another line of code."""
    line = "    out[i] = a[i] + 1"
    for sep in ("", "\u2028", "\x85", "\x0c", "\x1c"):
        source = f"from numba import cuda\n# note{sep}on two lines?\n@cuda.jit\ndef kernel(out, a):\n" \
                 f"    i = cuda.threadIdx.x\n{line}\n"
        assert source.split("\n")[5] == line
        f = Failure("wrong_output", "out[0] is 1.0 but should be 10.0; 4 cells differ.", line=6, array="out")
        assert failure_summary([f], source)["shape"] == "out[…] = a[…] + 1", repr(sep)


# -- a room folder that is broken or hostile ----------------------------------------------------------


def test_a_learners_folder_that_is_a_link_is_named_and_never_followed(tmp_path):
    elsewhere = served_room(tmp_path / "another-room", ["dot"])
    room = tmp_path / "room"
    room.mkdir()
    (room / "room.json").write_text(json.dumps({"title": "Sunday", "puzzles": ["dot"]}))
    (room / "learners").symlink_to(elsewhere / "learners")  # or to /: every folder of the disk a learner
    picture = LiveRoom(room, clock=lambda: NOW).refresh()
    assert picture.rows == [] and picture.misconceptions == []
    assert picture.problems == [(room / "learners", "is a link, not a served room's own learners folder: not followed")]
    report = load_class([room])
    assert report.learners == [] and report.skipped == picture.problems


def test_thousands_of_stray_files_in_learners_are_a_few_lines_and_a_quick_refresh(tmp_path):
    room = served_room(tmp_path / "room", ["dot"])
    for n in range(3000):
        (room / "learners" / f"stray-{n:05d}").touch()
    os.symlink("/", room / "learners" / "zz-root")
    live = LiveRoom(room, clock=lambda: NOW)
    picture = live.refresh()
    assert [r.cells["dot"].state for r in picture.rows] == [FAILING, FAILING]
    assert len(picture.problems) == 21, len(picture.problems)  # were 3001: one line a file
    assert picture.problems[0] == (room / "learners" / "stray-00000", "is not a folder: left out")
    assert picture.problems[-1] == (room / "learners", "holds 2981 more entries that are not learners' folders "
                                                       "(links or files): left out")


# -- the honest side: what the facilitator needs to read from ordinary learners ---------------------


class Clock:
    def __init__(self, t: float):
        self.t = t

    def __call__(self) -> float:
        return self.t


def ran(root: Path, folder: str, steps: list[tuple]) -> Store:
    """A learner's folder after `steps`: (seconds before NOW, "open" | "pass" | "fail" | "close", puzzle,
    summary), written by the real store on a clock that does what the steps say (backwards too)."""
    clock = Clock(NOW)
    store = Store(root / "learners" / folder, clock=clock)
    for ago, what, pid, *summary in steps:
        clock.t = NOW - ago
        if what == "open":
            store.record_open(pid)
        elif what == "close":
            store.record_close()
        else:
            store.record_run(pid, what == "pass", summary[0] if what == "fail" else None)
    store.flush_activity(clock.t + 60)
    return store


def room_of(tmp_path: Path, puzzles=("map", "dot")) -> Path:
    root = tmp_path / "room"
    (root / "learners").mkdir(parents=True)
    (root / "room.json").write_text(json.dumps({"title": "Sunday", "puzzles": list(puzzles)}))
    return root


def test_a_learner_who_solved_and_then_broke_it_stays_solved_and_out_of_the_mistakes(tmp_path):
    """Decided: once solved, solved. A learner trying a faster kernel after the solution is not stuck,
    and "12 of 27 race on `cache`" must count those who have not got there yet."""
    room = room_of(tmp_path)
    ran(room, "s01", [(600, "open", "dot"), (500, "fail", "dot", RACE), (400, "pass", "dot"),
                      (300, "fail", "dot", RACE)])
    ran(room, "s02", [(600, "open", "dot"), (300, "fail", "dot", RACE)])
    picture = LiveRoom(room, clock=lambda: NOW).refresh()
    rows = {r.id: r for r in picture.rows}
    assert rows["s01"].cells["dot"].state == "solved" and rows["s01"].stuck_s == 0 and rows["s01"].solved == 1
    assert [m.learners for m in picture.misconceptions] == [["s02"]]
    assert picture.misconceptions[0].describe(of=2).startswith("dot: 1 of 2 learners, race on `cache`")
    assert [m.learners for m in load_class([room]).misconceptions()] == [["s02"]]  # the report's rule is the same


def test_the_same_mistake_on_two_puzzles_is_two_groups_and_a_learner_who_moved_on_keeps_theirs(tmp_path):
    room = room_of(tmp_path)
    wrong = {"kind": "wrong_output", "rule": None, "array": "out", "line": 6, "shape": "out[…] = a[…] + 1",
             "other_shape": None, "gist": "out[#] is # but should be #;"}
    ran(room, "s01", [(900, "open", "map"), (800, "fail", "map", wrong), (700, "open", "dot"),
                      (600, "fail", "dot", wrong)])
    ran(room, "s02", [(900, "open", "map"), (800, "fail", "map", wrong)])
    picture = LiveRoom(room, clock=lambda: NOW).refresh()
    assert [(m.puzzle, m.learners) for m in picture.misconceptions] == [("map", ["s01", "s02"]), ("dot", ["s01"])]
    s01 = next(r for r in picture.rows if r.id == "s01")
    assert s01.current == "dot" and s01.cells["map"].state == FAILING  # unsolved, its latest run failing


def test_a_room_of_one_learner_with_no_name_and_a_room_of_none(tmp_path):
    room = room_of(tmp_path)
    picture = LiveRoom(room, clock=lambda: NOW).refresh()
    assert picture.rows == [] and picture.problems == [(room, "is a served room with no learners yet")]
    ran(room, "s01", [(600, "open", "dot"), (300, "fail", "dot", RACE)])
    picture = LiveRoom(room, clock=lambda: NOW).refresh()
    assert [r.label for r in picture.rows] == ["s01"] and picture.problems == []
    assert picture.misconceptions[0].describe(of=1).startswith("dot: 1 of 1 learner, race")


def test_times_with_offsets_read_as_the_same_moments_in_utc(tmp_path):
    folder = tmp_path / "exports"
    utc = export(folder, "ada", [record("dot", last_failure=RACE, last_active_at=iso_time(NOW - 60))], current="dot")
    shifted = json.loads(utc.read_text())
    shifted["learner"]["id"] = "bo"
    shifted["exported_at"] = "2026-12-06T17:29:30+05:30"  # NOW - 30 in India
    shifted["puzzles"][0] |= {"first_opened_at": "2026-12-06T06:50:00-05:00",
                              "last_run_at": "2026-12-06T13:59:00+02:00", "last_active_at": "2026-12-06T11:59:00Z"}
    (folder / "bo.json").write_text(json.dumps(shifted))
    rows = {r.id: r for r in LiveRoom(folder, clock=lambda: NOW + 11 * 60).refresh().rows}
    for field in ("last_run_at", "idle", "on_now", "stuck_s"):
        assert getattr(rows["bo"], field) == getattr(rows["ada"], field), field
    assert rows["bo"].idle and rows["bo"].last_run_at == NOW - 60


def test_a_clock_that_went_backwards_gives_no_negative_time_and_no_one_idle_from_the_future(tmp_path):
    """An NTP step or a laptop whose clock was ahead: a run stamped after the facilitator's now."""
    room = room_of(tmp_path)
    store = ran(room, "s01", [(600, "open", "dot"), (-900, "fail", "dot", RACE), (300, "fail", "dot", RACE)])
    assert store.progress("dot").active_s >= 0
    ran(room, "s02", [(600, "open", "dot"), (-900, "fail", "dot", RACE)])  # "ran" a quarter of an hour from now
    rows = {r.id: r for r in LiveRoom(room, clock=lambda: NOW).refresh().rows}
    assert rows["s02"].last_run_at == NOW + 900 and not rows["s02"].idle
    assert all(r.stuck_s >= 0 and all((c.active_s or 0) >= 0 for c in r.cells.values()) for r in rows.values())
