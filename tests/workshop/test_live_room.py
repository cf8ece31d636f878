"""The facilitator's live picture of the fixture room (tests/workshop/room_fixture.py): 30 learners
written by the real store with real verdicts, read as the live view reads them, refreshed as they
save, with broken and hostile folders among them."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.workshop.room_fixture import NOW, PUZZLES, TITLE, build_room, kernels
from tutor.store import MB, Store
from tutor.textsafe import has_unsafe
from tutor.workshop.live import FAILING, SOLVED, UNTOUCHED, WORKING, LiveRoom


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    return build_room(tmp_path_factory.mktemp("room") / "DATA")


@pytest.fixture
def room_copy(room, tmp_path):
    """The room, for a test that changes it: a copy (building one takes seconds)."""
    return Path(shutil.copytree(room, tmp_path / "DATA", symlinks=True))


def picture_of(path, **kw):
    return LiveRoom(path, clock=lambda: NOW, **kw).refresh()


def by_label(picture):
    return {r.label: r for r in picture.rows}


def states(picture, pid):
    """How many learners are in each state on `pid`."""
    out = {}
    for row in picture.rows:
        out[row.cells[pid].state] = out.get(row.cells[pid].state, 0) + 1
    return out


# -- the room at the fixture's moment ----------------------------------------------------------------


def test_the_room_has_thirty_learners_in_its_four_puzzles(room):
    p = picture_of(room)
    assert p.title == TITLE and p.puzzles == PUZZLES and p.problems == []
    assert len(p.rows) == 30
    assert states(p, "map") == {SOLVED: 19, FAILING: 3, UNTOUCHED: 8}
    assert states(p, "guard") == {FAILING: 5, SOLVED: 2, UNTOUCHED: 23}
    assert states(p, "shared") == {FAILING: 2, UNTOUCHED: 28}
    assert states(p, "dot") == {FAILING: 15, UNTOUCHED: 15}
    assert sorted(r.solved for r in p.rows).count(0) == 3 + 5 + 3  # never opened; guard; map
    unnamed = [r for r in p.rows if r.label == "learner-s28"]
    assert len(unnamed) == 1  # no name given: the id stands in


def test_failing_cells_carry_their_latest_failure_and_working_ones_none(room):
    p = picture_of(room)
    for row in p.rows:
        for pid, cell in row.cells.items():
            assert (cell.failure is not None) == (cell.state == FAILING), (row.label, pid)
            assert cell.state != WORKING  # every opened puzzle here has a run
    dot = by_label(p)["Learner 01"].cells["dot"]
    assert dot.failure["kind"] == "race" and dot.failure["array"] == "cache" and dot.runs >= 5


def test_the_rooms_misconceptions_are_its_five_mistakes_largest_first(room):
    p = picture_of(room)
    said = [(m.puzzle, m.kind, len(m.learners)) for m in p.misconceptions]
    assert said == [("dot", "race", 12), ("guard", "out_of_bounds", 5), ("dot", "race", 3),
                    ("map", "wrong_output", 3), ("shared", "barrier_divergence", 2)]
    big = p.misconceptions[0]
    assert big.describe(of=len(p.rows)).startswith("dot: 12 of 30 learners, race on `cache` between `cache[…] =")
    assert sorted(r.label for r in p.learners_of(big)) == [f"Learner {n:02d}" for n in range(1, 13)]
    assert "`out`" in p.misconceptions[2].what()


def test_sorted_by_time_stuck_the_longest_stuck_come_first_and_the_free_last(room):
    p = picture_of(room)
    rows = p.sorted_rows("stuck")
    assert [r.stuck_s for r in rows] == sorted((r.stuck_s for r in rows), reverse=True)
    assert rows[0].current == "dot" and rows[0].cells["dot"].state == FAILING and rows[0].stuck_s > 40 * 60
    free = [r.label for r in rows if r.stuck_s == 0]
    assert sorted(free) == ["Learner 26", "Learner 27", "Learner 29", "Learner 30", "learner-s28"]
    assert free == [r.label for r in rows[-5:]]


def test_sorted_by_progress_the_most_solved_come_first(room):
    p = picture_of(room)
    rows = p.sorted_rows("progress")
    assert [r.label for r in rows[:2]] == ["Learner 26", "Learner 27"] and rows[0].solved == 2
    assert [r.solved for r in rows] == sorted((r.solved for r in rows), reverse=True)
    assert [r.label for r in p.sorted_rows("name")] == sorted((r.label for r in p.rows), key=str.lower)


def test_idle_are_the_two_learners_at_it_who_last_ran_a_quarter_of_an_hour_ago(room):
    p = picture_of(room)
    assert sorted(r.label for r in p.idle()) == ["Learner 01", "Learner 02"]
    for r in p.idle():
        assert r.on_now and NOW - r.last_run_at == pytest.approx(15.5 * 60)
    # Ten minutes later all 25 still at a failing puzzle have not run for ten minutes (and their last
    # key is within the quarter of an hour that still counts as on it); the finished and the absent never.
    later = LiveRoom(room, clock=lambda: NOW + 10 * 60).refresh()
    assert sorted(r.label for r in later.idle()) == [f"Learner {n:02d}" for n in range(1, 26)]


def test_hints_by_puzzle_and_level(room):
    assert picture_of(room).hints() == {"map": {}, "guard": {2: 1}, "shared": {0: 2}, "dot": {1: 5, 2: 4}}


def test_the_learners_whose_app_closed_are_neither_on_now_nor_idle(room):
    p = by_label(picture_of(room))
    for label in ("Learner 26", "Learner 27"):
        assert not p[label].on_now and not p[label].idle


def test_an_idle_learner_who_closes_their_app_is_no_longer_idle_nor_on_now(room_copy):
    live = LiveRoom(room_copy, clock=lambda: NOW)
    assert by_label(live.refresh())["Learner 01"].idle
    Store(room_copy / "learners" / "s01", clock=lambda: NOW - 30).record_close()
    row = by_label(live.refresh())["Learner 01"]
    assert not row.idle and not row.on_now
    assert row.cells["dot"].state == FAILING  # still failing: closing is not solving


def test_seat_numbers_replace_names_and_stay_put_across_refreshes(room_copy):
    live = LiveRoom(room_copy, clock=lambda: NOW, seat_numbers=True)
    first = {r.id: r.label for r in live.refresh().rows}
    assert sorted(first.values()) == sorted(f"seat {n}" for n in range(1, 31))
    assert not any("Learner" in label for label in first.values())
    _run(room_copy, "s21", "map_reference")
    assert {r.id: r.label for r in live.refresh().rows} == first


# -- live: saves show on the next refresh; unchanged folders are not read again --------------------


_OPENED: list[str] | None = None


def _audit(event, args):
    if event == "open" and _OPENED is not None and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED.append(os.fsdecode(args[0]))


@contextlib.contextmanager
def files_opened():
    """The files this process opens meanwhile (Python's audit hook: os.open and open() say so),
    so that what a refresh reads is counted without touching the code that reads."""
    global _OPENED
    if not getattr(files_opened, "installed", False):
        sys.addaudithook(_audit)  # a hook cannot be removed: it listens only inside this block
        files_opened.installed = True
    _OPENED = []
    try:
        yield _OPENED
    finally:
        _OPENED = None


def learners_read(opened, root) -> set[str]:
    folder = os.fspath(root / "learners") + os.sep
    return {f[len(folder):].split(os.sep)[0] for f in opened if f.startswith(folder)}


def _run(root, folder, kernel, minutes=0.0):
    """The learner in `folder` runs `kernel` `minutes` before NOW, as the app records it."""
    from tests.workshop.room_fixture import verdict_of

    store = Store(root / "learners" / folder, clock=lambda: NOW - minutes * 60)
    pid, source = kernels()[kernel]
    store.save_code(pid, source)
    passed, summary = verdict_of(kernel)
    store.record_run(pid, passed, summary)


def test_a_learners_save_shows_on_the_next_refresh_and_only_their_folder_is_read_again(room_copy):
    live = LiveRoom(room_copy, clock=lambda: NOW)
    with files_opened() as opened:
        before = live.refresh()
    assert len(learners_read(opened, room_copy)) == 30  # the first refresh reads every folder
    with files_opened() as opened:
        again = live.refresh()
    assert learners_read(opened, room_copy) == set()
    assert [(r.id, r.cells) for r in again.rows] == [(r.id, r.cells) for r in before.rows]
    _run(room_copy, "s21", "map_reference")  # one of the three adding 1 not 10 fixes it
    with files_opened() as opened:
        after = live.refresh()
    assert learners_read(opened, room_copy) == {"s21"}
    assert by_label(after)["Learner 21"].cells["map"].state == SOLVED
    assert [(m.puzzle, len(m.learners)) for m in after.misconceptions if m.puzzle == "map"] == [("map", 2)]


def test_a_new_learner_and_a_learner_gone_show_on_the_next_refresh(room_copy):
    live = LiveRoom(room_copy, clock=lambda: NOW)
    live.refresh()
    (room_copy / "learners" / "s31").mkdir()
    (room_copy / "learners" / "s31" / "learner.json").write_text(json.dumps({"id": "learner-s31", "name": "Late"}))
    Store(room_copy / "learners" / "s31", clock=lambda: NOW).record_open("map")
    shutil.rmtree(room_copy / "learners" / "s30")
    p = live.refresh()
    labels = by_label(p)
    assert len(p.rows) == 30 and "Late" in labels and "Learner 30" not in labels
    assert labels["Late"].cells["map"].state == WORKING and labels["Late"].on_now


def test_a_folder_that_turns_bad_shows_as_a_problem_on_every_refresh_not_only_the_first(room_copy):
    live = LiveRoom(room_copy, clock=lambda: NOW)
    live.refresh()
    (room_copy / "learners" / "s05" / "state.json").write_bytes(b"{\"puzzles\": {")  # cut short
    first, second = live.refresh(), live.refresh()
    for p in (first, second):
        assert [path.name for path, _ in p.problems] == ["s05"], p.problems
        assert "Learner 05" not in by_label(p)  # not shown as a learner who did nothing
        assert len(p.rows) == 29


# -- hostile folders ----------------------------------------------------------------------------------


ESCAPED_NAME = "\x1b]0;pwned\x07Eve\r\n\x1b[2J\u202emallory"
ODD_FOLDERS = ["zz\nnew line\x1b[2J", "zz\x1b]0;title\x07two"]


def _hostile(root: Path) -> None:
    learners = root / "learners"
    (learners / "zz-link").symlink_to(learners / "s01", target_is_directory=True)
    (learners / "zz-link-out").symlink_to("/etc", target_is_directory=True)
    (learners / "zz-file").write_text("not a folder")
    big = learners / "zz-big"
    big.mkdir()
    (big / "learner.json").write_text(json.dumps({"id": "learner-big", "name": "Big"}))
    with open(big / "state.json", "wb") as f:
        f.write(b'{"puzzles": {')
        f.truncate(50 * MB)
    notjson = learners / "zz-notjson"
    notjson.mkdir()
    (notjson / "learner.json").write_text(json.dumps({"id": "learner-notjson", "name": "Nojs"}))
    (notjson / "state.json").write_bytes(b"\xff\xfe not json \x00")
    esc = learners / "zz-escname"
    esc.mkdir()
    (esc / "learner.json").write_text(json.dumps({"id": "learner-esc", "name": ESCAPED_NAME}))
    Store(esc, clock=lambda: NOW).record_open("map")
    badid = learners / "zz-badid"
    badid.mkdir()
    (badid / "learner.json").write_text(json.dumps({"id": "\x1b[2J\n", "name": None}))
    Store(badid, clock=lambda: NOW).record_open("guard")
    for name in ODD_FOLDERS:
        Store(learners / name, clock=lambda: NOW).record_open("dot")


def test_hostile_folders_are_named_or_shown_safely_and_the_room_goes_on(room_copy):
    _hostile(room_copy)
    p = picture_of(room_copy)
    problems = {path.name: why for path, why in p.problems}
    assert set(problems) == {"zz-link", "zz-link-out", "zz-file", "zz-big", "zz-notjson"}, problems
    assert "link" in problems["zz-link"] and "not a folder" in problems["zz-file"]
    assert "state.json was unreadable (is larger than 1 MB" in problems["zz-big"]
    assert "state.json was unreadable (not UTF-8 text)" in problems["zz-notjson"]
    # the 30 learners as before, and the four odd but readable folders as four more learners
    assert len(p.rows) == 34
    assert states(p, "dot")[FAILING] == 15 and states(p, "dot")[WORKING] == 2
    assert p.misconceptions[0].describe(of=len(p.rows)).startswith("dot: 12 of 34 learners")
    for row in p.rows:
        assert not has_unsafe(row.label) and not has_unsafe(row.id) and len(row.label) <= 64, row.label
    for _, why in p.problems:
        assert not has_unsafe(why) and len(why) <= 400, why
    assert len({r.id for r in p.rows}) == len(p.rows)  # the two odd folder names are two learners
    labels = by_label(p)
    assert "Learner 01" in labels  # the folder a link points at is read once, as itself
    assert "Big" not in labels and "Nojs" not in labels  # nothing of theirs read: problems, not rows
    assert labels["learner-esc"].cells["map"].state == WORKING  # a name with escapes: the id stands in
    assert labels["zz-badid"].cells["guard"].state == WORKING  # an id with escapes: the folder's name
    odd = sorted(r.label for r in p.rows if r.label.startswith("folder-"))
    assert len(odd) == 2 and all(len(label) == len("folder-") + 8 for label in odd)


def test_a_hostile_room_refreshed_again_gives_the_same_picture(room_copy):
    _hostile(room_copy)
    live = LiveRoom(room_copy, clock=lambda: NOW, seat_numbers=True)
    first, second = live.refresh(), live.refresh()
    assert [(r.id, r.label) for r in second.rows] == [(r.id, r.label) for r in first.rows]
    assert sorted(map(str, second.problems)) == sorted(map(str, first.problems))
    assert sorted(r.label for r in second.rows) == sorted(f"seat {n}" for n in range(1, 35))


def test_a_room_with_no_learners_folder_or_nothing_readable_is_a_problem_not_a_crash(tmp_path):
    (tmp_path / "empty").mkdir()
    p = picture_of(tmp_path / "empty")
    assert p.rows == [] and len(p.problems) == 1
    p = picture_of(tmp_path / "missing")
    assert p.rows == [] and len(p.problems) == 1
    (tmp_path / "served" / "learners").mkdir(parents=True)
    p = picture_of(tmp_path / "served")
    assert p.rows == [] and "no learners yet" in p.problems[0][1]


# -- exports ------------------------------------------------------------------------------------------


def _export_all(room: Path, out: Path) -> None:
    """Each learner runs `gpu-tutor export` in their data folder, into one folder for the facilitator."""
    from cli_run import run_cli

    out.mkdir()
    for folder in sorted((room / "learners").iterdir()):
        done = run_cli("export", "--out", out / f"{folder.name}.json",
                       env={**os.environ, "GPU_TUTOR_DATA": folder, "GPU_TUTOR_NO_GPU": "1"})
        assert done.returncode == 0, done.stderr


def test_a_folder_of_exports_gives_the_picture_a_served_room_gives(room_copy, tmp_path):
    served = picture_of(room_copy)
    _export_all(room_copy, tmp_path / "exports")
    exported = picture_of(tmp_path / "exports")
    assert exported.problems == [] and exported.puzzles == PUZZLES
    assert sorted((r.id, r.label, r.solved, tuple(sorted(r.cells.items()))) for r in exported.rows) == \
        sorted((r.id, r.label, r.solved, tuple(sorted(r.cells.items()))) for r in served.rows)
    assert [(m.key, m.learners) for m in exported.misconceptions] == \
        [(m.key, m.learners) for m in served.misconceptions]
    assert exported.hints() == served.hints()


def test_the_same_learner_exported_twice_counts_once_with_the_newer_export(room_copy, tmp_path):
    from cli_run import run_cli

    exports = tmp_path / "exports"
    _export_all(room_copy, exports)
    _run(room_copy, "s21", "map_reference")  # solves map, then exports again under another name
    done = run_cli("export", "--out", exports / "zz-again.json",
                   env={**os.environ, "GPU_TUTOR_DATA": room_copy / "learners" / "s21", "GPU_TUTOR_NO_GPU": "1"})
    assert done.returncode == 0
    p = picture_of(exports)
    assert len(p.rows) == 30
    assert by_label(p)["Learner 21"].cells["map"].state == SOLVED
    assert [len(m.learners) for m in p.misconceptions if m.puzzle == "map"] == [2]


def test_hostile_export_files_are_named_and_the_rest_read(room_copy, tmp_path):
    exports = tmp_path / "exports"
    _export_all(room_copy, exports)
    raw = json.loads((exports / "s05.json").read_text())
    (exports / "zz-escaped.json").write_text(json.dumps({**raw, "learner": {"id": "\x1b[2J\u202eid\n" * 10,
                                                                            "name": ESCAPED_NAME * 5}}))
    (exports / "zz-cut.json").write_text((exports / "s06.json").read_text()[:100])
    with open(exports / "zz-huge.json", "wb") as f:
        f.truncate(50 * MB)
    (exports / "zz-link.json").symlink_to(exports / "s07.json")
    p = picture_of(exports)
    assert {path.name for path, _ in p.problems} == {"zz-cut.json", "zz-huge.json", "zz-link.json"}
    assert len(p.rows) == 31
    for row in p.rows:
        assert not has_unsafe(row.label) and len(row.label) <= 64, row.label
    for _, why in p.problems:
        assert not has_unsafe(why)
