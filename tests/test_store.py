"""The store keeps a learner's code and progress: real files in a temporary folder, real crashes."""

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tutor.store import DATA_ENV, Autosaver, PuzzleProgress, Store, iso_time

STARTER = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(a, out):\n    pass  # your code here\n"


class FakeClock:
    def __init__(self, t: float = 1_700_000_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def code_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "code").iterdir())


# ---- code


def test_code_round_trip(tmp_path):
    store = Store(tmp_path)
    assert store.load_code("map", STARTER) == STARTER  # nothing saved yet
    assert not (tmp_path / "code").exists()  # reading creates nothing

    mine = "# ünïcödé, CRLF kept as typed\r\ndef kernel(a, out):\r\n    out[0] = a[0]\r\n"
    assert store.save_code("map", mine) is True
    assert store.load_code("map", STARTER) == mine
    assert Store(tmp_path).load_code("map", STARTER) == mine  # a new session sees it
    assert (tmp_path / "code" / "map.py").read_bytes() == mine.encode("utf-8")
    assert code_files(tmp_path) == ["map.py"]  # no temporary file left behind
    assert store.notices == []


def test_save_skips_unchanged_text(tmp_path):
    store = Store(tmp_path)
    store.save_code("map", "x = 1\n")
    path = tmp_path / "code" / "map.py"
    os.utime(path, (1_000_000, 1_000_000))
    assert store.save_code("map", "x = 1\n") is False
    assert path.stat().st_mtime == 1_000_000
    assert store.save_code("map", "x = 2\n") is True
    assert path.read_text() == "x = 2\n"


def test_puzzle_ids_cannot_escape_the_data_folder(tmp_path):
    store = Store(tmp_path)
    for bad in ("../evil", "a/b", "", ".hidden"):
        with pytest.raises(ValueError):
            store.save_code(bad, "x")
        with pytest.raises(ValueError):
            store.record_open(bad)


CHILD = textwrap.dedent("""
    import sys
    from tutor.store import Store
    from tests_texts import TEXTS
    store = Store(sys.argv[1])
    i = 0
    while True:
        store.save_code("map", TEXTS[i % 2])
        store.record_run("map", passed=i % 3 == 0)
        if i == 0:
            print("ready", flush=True)
        i += 1
""")

TEXTS_MODULE = textwrap.dedent("""
    OLD = "# old\\n" + "out[i] = a[i] + 10  # padding padding padding\\n" * 4000 + "# end old\\n"
    NEW = "# new\\n" + "out[i] = a[i] * 2\\n" * 9000 + "# end new\\n"
    TEXTS = [NEW, OLD]
""")


def test_killed_mid_save_leaves_old_or_new_text_never_a_torn_file(tmp_path):
    (tmp_path / "tests_texts.py").write_text(TEXTS_MODULE)
    (tmp_path / "child.py").write_text(CHILD)
    namespace: dict = {}
    exec(TEXTS_MODULE, namespace)
    old, new = namespace["OLD"], namespace["NEW"]
    root = tmp_path / "data"
    Store(root).save_code("map", old)

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    rng = random.Random(1234)
    for _ in range(20):
        child = subprocess.Popen([sys.executable, str(tmp_path / "child.py"), str(root)],
                                 stdout=subprocess.PIPE, env=env)
        assert child.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0, 0.03))
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        child.stdout.close()
        assert child.returncode == -signal.SIGKILL

        text = (root / "code" / "map.py").read_bytes().decode("utf-8")
        assert text in (old, new), f"torn file: {len(text)} chars"
        after = Store(root)
        assert after.notices == []  # state.json is whole too
        assert after.progress("map").attempts >= 1
        # A killed writer may leave its temporary file, never anything else.
        assert all(name == "map.py" or (name.startswith(".map.py.") and name.endswith(".tmp"))
                   for name in code_files(root))
    # Some kills must have landed mid-write (they leave a temporary file), or this proved nothing.
    assert any(name.endswith(".tmp") for name in code_files(root))


def test_stale_temp_files_are_swept(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    stale, fresh = code / ".map.py.abc123.tmp", code / ".map.py.def456.tmp"
    stale.write_text("partial")
    fresh.write_text("maybe being written right now")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    Store(tmp_path)
    assert not stale.exists() and fresh.exists()


def test_undecodable_code_file_is_moved_aside_not_deleted(tmp_path):
    store = Store(tmp_path, clock=FakeClock())
    garbage = b"def kernel():\n    \xff\xfe\x00 not utf-8\n"
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "map.py").write_bytes(garbage)

    assert store.load_code("map", STARTER) == STARTER
    [aside] = [p for p in (tmp_path / "code").iterdir()]
    assert aside.name.startswith("map.py.unreadable-")
    assert aside.read_bytes() == garbage
    assert len(store.notices) == 1 and str(aside) in store.notices[0]
    store.save_code("map", "fresh start\n")  # and saving works again
    assert aside.read_bytes() == garbage


def test_reset_keeps_the_previous_text_as_a_backup(tmp_path):
    store = Store(tmp_path, clock=FakeClock())
    assert store.reset_code("map", STARTER) is None  # nothing to keep yet
    assert store.load_code("map", STARTER) == STARTER

    store.save_code("map", "my first try\n")
    first = store.reset_code("map", STARTER)
    assert first is not None and first.name.startswith("map.py.bak-")
    assert first.read_text() == "my first try\n"
    assert store.load_code("map", STARTER) == STARTER

    assert store.reset_code("map", STARTER) is None  # already the starter: no empty backups
    store.save_code("map", "my second try\n")
    second = store.reset_code("map", STARTER)  # same clock second: a new name, not an overwrite
    assert second != first and second.read_text() == "my second try\n"
    assert first.read_text() == "my first try\n"


# ---- progress


def test_progress_with_an_injected_clock(tmp_path):
    clock = FakeClock(1_700_000_000.0)
    store = Store(tmp_path, clock=clock)
    assert store.progress("map") == PuzzleProgress()
    assert store.last_puzzle is None

    store.record_open("map")
    clock.t += 100
    store.record_run("map", passed=False)
    clock.t += 500
    store.record_run("map", passed=True)
    clock.t += 50
    store.record_run("map", passed=True)  # a later pass changes nothing but attempts
    clock.t += 1000
    store.record_open("map")  # reopening keeps the first opening
    store.record_hint("map", 2)
    store.record_hint("map", 1)  # the deepest level counts
    store.record_hint("map", 3, ai=True)
    store.record_hint("map", 1, ai=True)
    store.record_open("zip")

    p = store.progress("map")
    assert (p.solved, p.attempts, p.time_to_solve_s) == (True, 3, 600.0)
    assert p.first_opened_at == "2023-11-14T22:13:20.000+00:00"
    assert p.solved_at == "2023-11-14T22:23:20.000+00:00"
    assert (p.hint_levels_used, p.ai_hints_used) == (2, 2)
    # active time: 100 s to the first run; the 500 s before the pass is an idle gap, so 100 s to solve;
    # then 50 s to the next run; the 1000 s before reopening is idle too
    assert (p.active_s, p.active_to_solve_s) == (150.0, 100.0)
    assert p.last_active_at == "2023-11-14T22:40:50.000+00:00"  # the reopening, the hints and leaving for zip
    zip_opened = store.progress("zip").first_opened_at
    assert store.progress("zip") == PuzzleProgress(first_opened_at=zip_opened, active_s=0.0, last_active_at=zip_opened)
    assert store.last_puzzle == "zip"
    assert store.solved_count(["map", "zip", "never-seen"]) == 1

    again = Store(tmp_path)  # everything survives a restart
    assert again.progress("map") == p
    assert again.last_puzzle == "zip"
    data = json.loads((tmp_path / "state.json").read_text())
    assert data["puzzles"]["map"]["attempts"] == 3 and data["last_puzzle"] == "zip"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


# ---- active time (tutor.activity): only while the app is open and the learner does something


def test_a_puzzle_passed_through_in_3_s_has_3_s_while_the_one_worked_on_has_its_10_minutes(tmp_path):
    """On main a puzzle's time was the clock since it was first opened: this one read as 17 minutes."""
    clock = FakeClock()
    store = Store(tmp_path, clock=clock)
    start = clock.t
    store.record_open("map")
    clock.t += 3
    store.record_open("zip")  # leaving map for zip ends map's span
    for _ in range(20):  # a key every 30 s for 10 minutes
        clock.t += 30
        store.record_activity("zip")
    store.record_run("zip", passed=False)
    clock.t += 7 * 60  # then away: the gap is idle
    store.record_close()
    assert store.progress("map").active_s == 3.0
    assert store.progress("zip").active_s == 600.0
    assert clock.t - start == 1023  # the clock since map's opening, as main counted it: 17 minutes


def test_an_idle_gap_of_20_minutes_counts_none_of_the_gap(tmp_path):
    clock = FakeClock()
    store = Store(tmp_path, clock=clock)
    store.record_open("map")
    clock.t += 60
    store.record_activity("map")
    clock.t += 20 * 60  # lunch
    store.record_activity("map")
    clock.t += 30
    store.record_run("map", passed=True)
    clock.t += 5 * 60  # five minutes exactly still counts: reading the verdict
    store.record_activity("map")
    p = store.progress("map")
    assert (p.active_to_solve_s, p.active_s) == (90.0, 390.0)
    # the app left idle and then closed: the close adds nothing, and the last event stays where it was
    clock.t += 6 * 60
    store.record_close()
    assert store.progress("map").active_s == 390.0
    assert store.progress("map").last_active_at == iso_time(clock.t - 6 * 60)
    assert store.closed_at == iso_time(clock.t)


def test_activity_stays_in_memory_and_is_written_every_15_s_at_most_and_on_close(tmp_path):
    clock = FakeClock()
    store = Store(tmp_path, clock=clock)
    store.record_open("map")
    written = (tmp_path / "state.json").read_bytes()
    for _ in range(80):  # eight keys a second for 10 s
        clock.t += 0.125
        store.record_activity("map")
        assert not store.flush_activity()  # the app's autosave tick asks; too soon to write
    assert (tmp_path / "state.json").read_bytes() == written  # no write per key
    clock.t += 5
    store.record_activity("map")
    assert store.flush_activity() and not store.flush_activity()  # written once, then nothing new
    on_disk = json.loads((tmp_path / "state.json").read_text())
    assert on_disk["puzzles"]["map"]["active_s"] == 15.0 and on_disk["closed_at"] is None
    clock.t += 2
    store.record_activity("map")
    store.record_close()
    again = Store(tmp_path)
    assert again.progress("map").active_s == 17.0 and again.closed_at == iso_time(clock.t)


def test_a_progress_file_from_before_active_time_loads_and_keeps_its_records(tmp_path):
    old = {"version": 1, "last_puzzle": "map", "puzzles": {"map": {
        "solved": True, "solved_at": "2023-11-14T22:23:20.000+00:00", "attempts": 3,
        "first_opened_at": "2023-11-14T22:13:20.000+00:00", "time_to_solve_s": 600.0,
        "hint_levels_used": 1, "ai_hints_used": 0}}}
    (tmp_path / "state.json").write_text(json.dumps(old))
    clock = FakeClock()
    store = Store(tmp_path, clock=clock)
    assert store.notices == [] and store.closed_at is None
    p = store.progress("map")
    assert (p.solved, p.time_to_solve_s, p.active_s, p.active_to_solve_s) == (True, 600.0, None, None)
    store.record_open("map")  # the learner's first session with active time counts from here
    clock.t += 40
    store.record_close()
    p = Store(tmp_path).progress("map")
    assert (p.attempts, p.active_s, p.active_to_solve_s) == (3, 40.0, None)


@pytest.mark.parametrize("field, value", [("active_s", -1), ("active_s", "10"), ("active_to_solve_s", True),
                                          ("last_active_at", "yesterday")])
def test_an_active_time_no_gpu_tutor_writes_is_refused_with_its_record(tmp_path, field, value):
    state = {"version": 1, "puzzles": {"map": {"attempts": 1, field: value}, "zip": {"attempts": 2}}}
    (tmp_path / "state.json").write_text(json.dumps(state))
    store = Store(tmp_path, read_only=True)
    assert store.progress("map") == PuzzleProgress() and store.progress("zip").attempts == 2
    assert store.notices == [f"part of the progress file {tmp_path / 'state.json'} was unreadable (map)"]


def test_run_without_open_counts_but_has_no_time_to_solve(tmp_path):
    store = Store(tmp_path, clock=FakeClock())
    p = store.record_run("map", passed=True)
    assert p.solved and p.attempts == 1 and p.time_to_solve_s is None and p.first_opened_at is not None


@pytest.mark.parametrize("content", [b"{\"version\": 1, \"puzzles\": {", b"[1, 2, 3]", b"\xff\xfe{}", b"",
                                     b"{\"puzzles\": []}"])
def test_corrupt_state_file_is_moved_aside_and_a_fresh_state_starts(tmp_path, content):
    (tmp_path / "state.json").write_bytes(content)
    store = Store(tmp_path, clock=FakeClock())  # never raises

    [aside] = list(tmp_path.glob("state.json.corrupt-*"))
    assert aside.read_bytes() == content
    assert len(store.notices) == 1
    assert "your progress file" in store.notices[0] and str(aside) in store.notices[0]
    assert "starting fresh" in store.notices[0]
    assert store.progress("map") == PuzzleProgress() and store.last_puzzle is None

    store.record_open("map")  # and progress is saved again
    assert Store(tmp_path).last_puzzle == "map"
    assert aside.read_bytes() == content


def test_partly_corrupt_state_keeps_the_good_entries_and_a_copy_of_the_original(tmp_path):
    original = json.dumps({
        "version": 1, "last_puzzle": "map", "from_a_newer_version": [1, 2],
        "puzzles": {"map": {"solved": True, "attempts": 4}, "zip": {"attempts": "many"}},
    }).encode()
    (tmp_path / "state.json").write_bytes(original)
    store = Store(tmp_path, clock=FakeClock())

    assert store.progress("map").solved and store.progress("map").attempts == 4
    assert store.progress("zip") == PuzzleProgress()
    [copy] = list(tmp_path.glob("state.json.corrupt-*"))
    assert copy.read_bytes() == original
    assert len(store.notices) == 1 and "zip" in store.notices[0] and str(copy) in store.notices[0]
    store.record_run("map", passed=False)
    assert json.loads((tmp_path / "state.json").read_text())["from_a_newer_version"] == [1, 2]


def test_unwritable_data_folder_gives_a_notice_not_a_crash(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    store = Store(blocker)
    store.record_open("map")
    store.record_run("map", passed=True)
    assert len(store.notices) == 1 and "could not be saved" in store.notices[0]
    assert store.progress("map").solved  # kept in memory for this session
    with pytest.raises(OSError):  # code saves raise: the caller still holds the text
        store.save_code("map", "x")


# ---- where the data lives


def test_data_folder_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "learner-7"))
    store = Store()
    assert store.root == tmp_path / "learner-7"
    store.save_code("map", "x = 1\n")
    assert (tmp_path / "learner-7" / "code" / "map.py").read_text() == "x = 1\n"

    assert Store(tmp_path / "explicit").root == tmp_path / "explicit"  # an explicit root wins


def test_default_data_folder_is_the_platform_user_data_folder(monkeypatch):
    import platformdirs

    monkeypatch.delenv(DATA_ENV, raising=False)
    assert Store().root == platformdirs.user_data_path("gpu-tutor", appauthor=False)


# ---- autosave


def test_autosave_debounces_half_a_second(tmp_path):
    store = Store(tmp_path)
    saver = Autosaver(store.save_code)
    assert not saver.due(0.0) and saver.next_due() is None

    saver.feed("map", "a", now=10.0)
    saver.feed("map", "ab", now=10.2)
    assert saver.next_due() == pytest.approx(10.7)
    assert not saver.due(10.69)
    assert saver.due(10.7)
    assert saver.flush() is True
    assert store.load_code("map", STARTER) == "ab"
    assert not saver.pending and not saver.due(99.0)


def test_autosave_never_later_than_one_second_after_the_first_unsaved_keystroke(tmp_path):
    store = Store(tmp_path)
    saver = Autosaver(store.save_code)
    saved_at = []
    text = ""
    # A fast typist (a key every 0.1 s until 2.4 s) never pauses for the debounce: saves are capped at
    # 1 s after the first unsaved key; then the pause after the last key saves 0.5 s later.
    for tick in range(0, 400):  # the app's timer, every 10 ms
        now = tick / 100
        if tick % 10 == 0 and now < 2.45:
            text += "x"
            saver.feed("map", text, now)
        if saver.due(now):
            saver.flush()
            saved_at.append(now)
    assert saved_at == pytest.approx([1.0, 2.1, 2.9])
    assert store.load_code("map", "") == "x" * 25


def test_autosave_bound_holds_for_any_typing_rhythm(tmp_path):
    rng = random.Random(7)
    store = Store(tmp_path)
    saver = Autosaver(store.save_code)
    keystrokes, flushes = [], []
    now, next_key = 0.0, 0.0
    for tick in range(3000):
        now = tick / 100
        if now >= next_key and now < 25:
            keystrokes.append(now)
            saver.feed(rng.choice(["map", "zip"]), f"text {tick}", now)
            next_key = now + rng.choice([0.01, 0.05, 0.2, 0.45, 0.6, 2.0])
        if saver.due(now):
            assert saver.flush()
            flushes.append(now)
    for key in keystrokes:
        assert any(key <= f <= key + 1.0 + 1e-9 for f in flushes), key
    for earlier, later in zip(flushes, flushes[1:]):  # it does debounce: no save storms
        assert later - earlier >= 0.01


def test_autosave_keeps_text_pending_when_the_save_fails(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    saver = Autosaver(Store(blocker).save_code)
    saver.feed("map", "precious", now=0.0)
    assert saver.due(0.5)
    assert saver.flush() is False and isinstance(saver.last_error, OSError)
    assert saver.pending and saver.due(0.6)  # retried on the next tick

    blocker.unlink()  # the disk recovers
    assert saver.flush() is True and saver.last_error is None
    assert Store(blocker).load_code("map", "") == "precious"


# ---- files that are not what their names say


def finishes(seconds, call):
    """`call()`, in a daemon thread so that a hang fails the test instead of stopping the run."""
    import threading

    out = {}

    def run():
        try:
            out["value"] = call()
        except BaseException as e:  # raised again below, in the test's own thread
            out["error"] = e

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still waiting after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_read_regular_refuses_a_link_a_pipe_a_folder_and_an_oversize_file_saying_which(tmp_path):
    from tutor.store import UnreadableFile, read_regular

    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"12345")
    assert read_regular(plain, 5) == b"12345"
    (tmp_path / "link").symlink_to(plain)
    (tmp_path / "zero").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo")
    cases = {"link": "is a symbolic link", "zero": "is a symbolic link", "fifo": "is a named pipe (FIFO)"}
    for name, words in cases.items():
        with pytest.raises(UnreadableFile) as caught:
            finishes(5, lambda: read_regular(tmp_path / name, 1024))
        assert caught.value.strerror.startswith(words) and str(caught.value).startswith(str(tmp_path / name))
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 4097)
    assert len(read_regular(big, 4097)) == 4097
    with pytest.raises(UnreadableFile, match="is larger than 4 KB"):
        read_regular(big, 4096)
    with pytest.raises(IsADirectoryError):
        read_regular(tmp_path, 1024)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing", 1024)
    assert read_regular(tmp_path / "link", 5, follow_links=True) == b"12345"  # for files a person names
    with pytest.raises(UnreadableFile, match="is a device"):
        read_regular(tmp_path / "zero", 1024, follow_links=True)  # followed, /dev/zero is still refused


def test_a_pipe_in_place_of_the_progress_file_is_moved_aside_instead_of_waiting_forever(tmp_path):
    os.mkfifo(tmp_path / "state.json")  # today's code blocks in open() here, for ever
    store = finishes(5, lambda: Store(tmp_path, clock=FakeClock()))
    assert len(store.notices) == 1 and "is a named pipe (FIFO)" in store.notices[0]
    store.record_open("map")
    assert json.loads((tmp_path / "state.json").read_text())["last_puzzle"] == "map"  # a real file again


def test_a_link_or_a_pipe_in_place_of_a_code_file_shows_the_starter_and_the_target_is_untouched(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("someone else's file\n")
    store = Store(tmp_path, clock=FakeClock())
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "map.py").symlink_to(secret)
    os.mkfifo(tmp_path / "code" / "zip.py")
    assert finishes(5, lambda: store.load_code("map", STARTER)) == STARTER
    assert finishes(5, lambda: store.load_code("zip", STARTER)) == STARTER
    assert "is a symbolic link" in store.notices[0] and "is a named pipe (FIFO)" in store.notices[1]
    assert finishes(5, lambda: store.save_code("map", "mine\n")) is True
    assert secret.read_text() == "someone else's file\n"
    assert store.load_code("map", STARTER) == "mine\n"


def test_a_progress_record_holding_infinity_or_a_huge_count_is_refused_on_its_own(tmp_path):
    (tmp_path / "state.json").write_text(json.dumps({"version": 1, "puzzles": {
        "map": {"solved": True, "attempts": 2, "time_to_solve_s": 60.0},
        "zip": {"time_to_solve_s": float("inf")},
        "dot": {"attempts": 10 ** 400}}}))  # json.dumps writes Infinity and the 401 digits as they are
    store = Store(tmp_path, clock=FakeClock())
    assert store.progress("map").attempts == 2
    assert store.progress("zip") == PuzzleProgress() and store.progress("dot") == PuzzleProgress()
    assert "part of your progress file was unreadable (zip, dot)" in store.notices[0]


def test_strict_json_refuses_infinity_nan_out_of_range_floats_and_400_digit_integers():
    from tutor.store import NotOurJSON, loads_strict

    assert loads_strict('{"a": [1, 2.5, -3, 99999999999999999999]}') == {"a": [1, 2.5, -3, 99999999999999999999]}
    for text, words in [("[Infinity]", "holds Infinity"), ("[-Infinity]", "holds -Infinity"), ("[NaN]", "holds NaN"),
                        ("[1e400]", "past the range of a float"), ("[" + "9" * 400 + "]", "an integer of 400 digits"),
                        ("[-" + "9" * 5000 + "]", "an integer of 5000 digits")]:
        with pytest.raises(NotOurJSON, match=words):
            loads_strict(text)


# -- a served learner's folder has a cap --------------------------------------------------------------
def test_a_folder_with_a_quota_refuses_a_save_past_it_and_keeps_the_old_file(tmp_path):
    """A browser learner could fill the room's disk: every reset keeps a backup, every file up to 4 MB."""
    from tutor.store import QuotaExceeded

    store = Store(tmp_path, quota_mb=1)
    store.save_code("map", "x" * 600_000)
    with pytest.raises(QuotaExceeded) as full:
        store.save_code("zip", "y" * 600_000)
    assert "of the 1 MB your facilitator allows" in full.value.strerror
    assert not store.code_path("zip").exists()
    store.save_code("map", "z" * 700_000)  # in place of the old text: it fits
    assert store.load_code("map", "") == "z" * 700_000


def test_resets_stop_at_the_quota_and_leave_the_code_as_it_was(tmp_path):
    from tutor.store import QuotaExceeded

    store = Store(tmp_path, quota_mb=1)
    resets, held = 0, None
    with pytest.raises(QuotaExceeded):
        for n in range(100):
            held = store.load_code("map", "")
            store.save_code("map", f"{n}" + "x" * 200_000)
            held = store.load_code("map", "")
            store.reset_code("map", "starter")
            resets += 1
    assert 2 <= resets < 10
    assert store.load_code("map", "") == held  # the refused save or reset changed nothing


def test_without_a_quota_a_folder_takes_what_it_is_given(tmp_path):
    store = Store(tmp_path)
    for n in range(3):
        store.save_code(f"p{n}", "x" * 1_000_000)
    assert all(store.code_path(f"p{n}").exists() for n in range(3))


SUMMARY = {"kind": "race", "rule": None, "array": "cache", "line": 14, "shape": "cache[…] = a[…] * b[…]",
           "other_shape": "_ += cache[…]", "gist": "Thread (#,) writes cache[#] on line #"}


def test_a_failing_run_keeps_when_it_ran_and_what_went_wrong_and_a_passing_run_clears_it(tmp_path):
    """The facilitator's live view reads both (tutor.workshop.live): a room's latest failures."""
    clock = FakeClock()
    store = Store(tmp_path, clock=clock)
    p = store.record_run("dot", passed=False, failure=SUMMARY)
    assert p.last_failure == SUMMARY and p.last_run_at == iso_time(clock.t)
    assert Store(tmp_path).progress("dot").last_failure == SUMMARY  # on disk, and read back
    clock.t += 60
    p = store.record_run("dot", passed=True, failure=SUMMARY)  # a pass has nothing wrong, whatever is passed
    assert p.solved and p.last_failure is None and p.last_run_at == iso_time(clock.t)


@pytest.mark.parametrize("summary", [{"kind": 3}, {"kind": "race", "shape": "x" * 500}, {"kind": "race", "line": -1},
                                     {"kind": "race", "extra": "?"}, ["race"], {"kind": "race", "line": True}])
def test_a_failure_summary_no_gpu_tutor_writes_is_refused(tmp_path, summary):
    store = Store(tmp_path, clock=FakeClock())
    assert store.record_run("dot", passed=False, failure=summary).last_failure is None
    state = {"version": 1, "puzzles": {"dot": {"attempts": 1, "last_failure": summary}, "map": {"attempts": 2}}}
    (tmp_path / "state.json").write_text(json.dumps(state))
    read = Store(tmp_path, read_only=True)
    assert read.progress("dot") == PuzzleProgress() and read.progress("map").attempts == 2
