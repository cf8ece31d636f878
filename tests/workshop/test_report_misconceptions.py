"""`gpu-tutor report` over a served room of 30 learners with real verdicts (room_fixture.build_room):
the room's misconceptions, its two plots, the HTML page, and --seats, which leaves no name anywhere."""

import csv
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from cli_run import run_cli
from tests.workshop.room_fixture import NOW, PUZZLES, build_room
from tests.workshop.test_export_report import old_export
from tutor.workshop.live import LiveRoom
from tutor.workshop.report import MISCONCEPTIONS_TITLE, NO_MISCONCEPTIONS


def gpu_tutor(*args, data=None):
    env = {**os.environ, "GPU_TUTOR_NO_GPU": "1"}
    env.pop("GPU_TUTOR_WORKSHOP", None)
    if data is not None:
        env["GPU_TUTOR_DATA"] = str(data)
    return run_cli(*args, env=env)


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    return build_room(tmp_path_factory.mktemp("room") / "data")


class Report:
    """One run of `gpu-tutor report` and everything it wrote."""

    def __init__(self, room: Path, out: Path, *options: str):
        out.mkdir(parents=True, exist_ok=True)
        self.csv, self.html = out / "class.csv", out / "class.html"
        self.done = gpu_tutor("report", str(room), "--csv", str(self.csv), "--html", str(self.html), *options)
        assert self.done.returncode == 0, self.done.stderr
        self.lines = self.done.stdout.splitlines()
        self.misconceptions_csv = out / "class-misconceptions.csv"
        self.over_time_csv = out / "class-over-time.csv"

    def section(self, title_start: str) -> list[str]:
        """The lines from the one starting so to the next empty line."""
        start = next(n for n, line in enumerate(self.lines) if line.startswith(title_start))
        end = self.lines.index("", start)
        return self.lines[start:end]

    def outputs(self) -> str:
        """Every text the report showed or wrote."""
        files = [self.csv, self.misconceptions_csv, self.over_time_csv, self.html]
        return "\n".join([self.done.stdout, self.done.stderr, *(p.read_text(encoding="utf-8") for p in files)])


@pytest.fixture(scope="module")
def report(room, tmp_path_factory):
    return Report(room, tmp_path_factory.mktemp("report"))


def rows_of(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


# ---- the misconception table


def test_the_rooms_largest_mistake_heads_the_misconception_table_dot_12_of_30_a_race_on_cache(report):
    table = report.section(MISCONCEPTIONS_TITLE)
    assert table[1].split() == ["puzzle", "learners", "what", "went", "wrong", "who"]
    first = table[2]
    assert re.match(r"  dot +12 of 30 +race on `cache` ", first), first
    assert first.rstrip().endswith("Learner 01, Learner 02 +10")


def test_the_three_spellings_of_the_dot_race_are_one_row_and_the_race_on_out0_another(report):
    rows = rows_of(report.misconceptions_csv)
    dot = [r for r in rows if r["puzzle"] == "dot"]
    assert [(r["learners"], r["of"], r["kind"], r["array"]) for r in dot] == [("12", "30", "race", "cache"),
                                                                            ("3", "30", "race", "out")]
    assert dot[0]["what_went_wrong"].startswith("race on `cache`")
    assert dot[0]["who"] == "; ".join(f"Learner {n:02d}" for n in range(1, 13))  # every one, in the CSV
    # the fixture's other mistakes, one row each, largest first
    assert [(r["puzzle"], r["learners"]) for r in rows] == [("dot", "12"), ("guard", "5"), ("dot", "3"),
                                                            ("map", "3"), ("shared", "2")]
    table = report.section(MISCONCEPTIONS_TITLE)
    assert sum(1 for line in table if re.match(r"  (dot|guard|map|shared) +\d+ of 30 ", line)) == 5


def test_an_export_without_last_failure_still_reads_and_shows_no_misconception(tmp_path):
    """The export format before the live view: no last_run_at, no last_failure; zip's last run failed."""
    old = old_export(zip_attempts=3)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    done = gpu_tutor("report", str(path), "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert lines[lines.index(MISCONCEPTIONS_TITLE) + 1] == NO_MISCONCEPTIONS
    assert rows_of(tmp_path / "c-misconceptions.csv") == []
    assert [r["solved_so_far"] for r in rows_of(tmp_path / "c-over-time.csv")][-1] == "1"


def test_an_export_of_a_failing_learner_carries_the_failure_to_the_report(room, tmp_path):
    """`gpu-tutor export` writes last_run_at and last_failure; the export reader keeps them."""
    folder = tmp_path / "s01"
    shutil.copytree(room / "learners" / "s01", folder)
    out = tmp_path / "s01.json"
    assert gpu_tutor("export", "--out", str(out), data=folder).returncode == 0
    dot = next(p for p in json.loads(out.read_text())["puzzles"] if p["id"] == "dot")
    assert dot["last_failure"]["kind"] == "race" and dot["last_run_at"]
    done = gpu_tutor("report", str(out), "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.match(r"  dot +1 of 1 +race on `cache` .*Learner 01$", lines[lines.index(MISCONCEPTIONS_TITLE) + 2])


# ---- the plots


LEARNERS_PER_PUZZLE = {  # (solved, failing, working, not opened): the room as room_fixture.py describes it
    "map": (19, 3, 0, 8),      # 12 + 3 dot learners, 2 shared, 2 who solved all; 3 who add 1
    "guard": (2, 5, 0, 23),
    "shared": (0, 2, 0, 28),
    "dot": (0, 15, 0, 15),     # 12 with no barrier, 3 adding into out[0]; the other 15 never opened it
}


def test_the_learners_per_puzzle_plot_counts_every_learner_of_the_room(report):
    plot = report.section("Learners per puzzle:")
    bars = {line.split()[0]: line for line in plot if "│" in line}
    assert list(bars) == PUZZLES
    for pid, line in bars.items():
        assert tuple(int(c) for c in line.split()[-4:]) == LEARNERS_PER_PUZZLE[pid], line
        shades = [line.count(c) for c in "█▓▒░"]
        assert shades == list(LEARNERS_PER_PUZZLE[pid]), line  # 30 learners: 1 column each
    assert plot[-1].strip() == "learners (1 column = 1 learner)"
    assert plot[-2].split() == ["0", "5", "10", "15", "20", "25", "30"]
    html = report.html.read_text()
    for pid, counts in LEARNERS_PER_PUZZLE.items():
        assert f"<tr><td>{pid}</td>" + "".join(f"<td>{n}</td>" for n in counts) + "</tr>" in html


def test_the_progress_plot_adds_up_to_the_rooms_solves(report):
    """21 solves: map by 19 learners 55 minutes before the fixture's now, guard by 2 at 36 minutes."""
    plot = report.section("Progress over time:")
    assert plot[0] == "Progress over time: puzzles solved by the room so far, every 5 min"
    steps = [line for line in plot if "│" in line]
    totals = [int(line.split("│")[1].split()[-2 if "(+" in line else -1]) for line in steps]
    assert totals[-1] == 21 and totals == sorted(totals)
    assert [line.split()[0] for line in steps][-1] == "12:00"  # the step of the last key, a minute before 12:00
    rows = rows_of(report.over_time_csv)
    assert sum(int(r["solved_in_step"]) for r in rows) == 21 and rows[-1]["solved_so_far"] == "21"
    assert [int(r["solved_so_far"]) for r in rows] == totals
    solved_at = {r["step_end"][11:16]: int(r["solved_in_step"]) for r in rows if r["solved_in_step"] != "0"}
    assert solved_at == {"11:10": 19, "11:25": 2}
    assert plot[-1].strip() == "puzzles solved so far (1 column = 1 puzzle)"
    assert plot[-2].split() == ["0", "5", "10", "15", "20"]


def test_the_misconceptions_and_plots_read_right_in_80_columns(report):
    start = report.lines.index(MISCONCEPTIONS_TITLE)
    end = next(n for n, line in enumerate(report.lines) if line.startswith("wrote "))
    assert all(len(line) <= 80 for line in report.lines[start:end]), \
        [line for line in report.lines[start:end] if len(line) > 80]


# ---- the HTML page


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}


def test_the_html_page_shows_hostile_names_and_titles_as_text(room, tmp_path):
    hostile = tmp_path / "room"
    shutil.copytree(room, hostile)
    names = {"s01": "<script>alert(1)</script>", "s02": '"><img src=x onerror=alert(1)>'}
    for folder, name in names.items():
        path = hostile / "learners" / folder / "learner.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "name": name}))
    described = json.loads((hostile / "room.json").read_text())
    (hostile / "room.json").write_text(json.dumps({**described, "title": "</title><style>*{display:none}</style>"}))
    page = Report(hostile, tmp_path / "out").html.read_text()
    for name in names.values():
        assert page.count(f"<td>{_escaped(name)}</td>") == 1  # who is where
        assert _escaped(name) in page.split(MISCONCEPTIONS_TITLE.replace("'", "&#x27;"))[1]  # and who made the race
    assert "&lt;/title&gt;&lt;style&gt;*{display:none}&lt;/style&gt;" in page
    parsed = Tags()
    parsed.feed(page)
    assert parsed.tags <= {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "span", "table",
                           "thead", "tbody", "tr", "th", "td", "code", "svg", "line", "rect", "text"}, parsed.tags
    assert not {a for a in parsed.attributes if a.startswith("on") or a in ("src", "href")}, parsed.attributes
    assert re.search(r"https?:|url\(|@import", page) is None  # nothing fetched


def _escaped(text: str) -> str:
    import html

    return html.escape(text, quote=True)


# ---- seats in place of names


def test_seats_leave_no_name_or_id_in_any_output_and_number_learners_as_the_live_view_does(room, tmp_path):
    learners = [json.loads((folder / "learner.json").read_text()) for folder in (room / "learners").iterdir()]
    names = [who["name"] for who in learners if who["name"]]
    ids = [who["id"] for who in learners]
    assert len(names) == 29 and len(ids) == 30  # one learner never gave a name: their id is their label

    named = Report(room, tmp_path / "named")
    shown = named.outputs()
    assert all(name in shown for name in names) and all(learner_id in shown for learner_id in ids)

    seated = Report(room, tmp_path / "seated", "--seats")
    shown = seated.outputs()
    assert [name for name in names if name in shown] == []
    assert [learner_id for learner_id in ids if learner_id in shown] == []
    table = seated.section("Who is where")[2:]
    assert [" ".join(row.split()[:2]) for row in table] == [f"seat {n}" for n in range(1, 31)]
    assert {r["learner"] for r in rows_of(seated.csv)} == {f"seat {n}" for n in range(1, 31)}
    assert {r["learner_id"] for r in rows_of(seated.csv)} == {""}
    assert rows_of(seated.misconceptions_csv)[0]["who"] == "; ".join(f"seat {n}" for n in range(1, 13))

    # the live view (tutor.workshop.live) gives each learner the same seat
    picture = LiveRoom(room, clock=lambda: NOW, seat_numbers=True).refresh()
    live = {row.label: (str(row.solved), sum(c.runs for c in row.cells.values())) for row in picture.rows}
    reported = {}
    for row in table:  # seat N, solved/4, now on, progress, runs, hint level, AI hints
        cells = row.split()
        reported[" ".join(cells[:2])] = (cells[2].split("/")[0], int(cells[-3]))
    assert live == reported


def test_with_seats_the_note_on_a_learner_who_exported_twice_names_their_seat(room, tmp_path):
    folder = tmp_path / "s01"
    shutil.copytree(room / "learners" / "s01", folder)
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    for out in (first, second):
        assert gpu_tutor("export", "--out", str(out), data=folder).returncode == 0
    done = gpu_tutor("report", str(first), str(second), "--seats", "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"gpu-tutor: note: {first} and {second} are the same learner (seat 1); "
                                        f"using the newer, {second}"]
    assert "Learner 01" not in done.stdout + done.stderr


def test_a_room_of_a_hundred_with_long_names_and_ids_over_three_days_still_fits_80_columns(tmp_path):
    """The catalog's longest ids (22 characters), names of 60, a bar that must scale (100 learners),
    time steps that must grow (three days): each line of the misconceptions and the plots in 80 columns,
    and every learner still counted."""
    from tutor.store import iso_time

    pids = ["perf_reduce_sequential", "perf_transpose_shared", "perf_transpose_padded"]
    failure = {"kind": "race", "rule": None, "array": "cache", "line": 3, "shape": "cache[…] = _",
               "other_shape": "_ += cache[…]", "gist": ""}
    for n in range(100):
        puzzles = [{"id": pid, "solved": (n + k) % 3 == 0, "attempts": 2, "time_to_solve_s": None,
                    "hint_levels_used": 0, "ai_hints_used": 0,
                    "first_opened_at": iso_time(NOW - 3 * 86400 + n * 600),
                    "solved_at": iso_time(NOW - 2 * 86400 + n * 900) if (n + k) % 3 == 0 else None,
                    "last_failure": failure if (n + k) % 3 == 1 else None} for k, pid in enumerate(pids)]
        export = {"format": "gpu-tutor-progress", "version": 1, "exported_at": iso_time(NOW),
                  "learner": {"id": f"learner-{n:08x}", "name": f"Learner with a name of sixty characters, no {n:03d}"},
                  "workshop": None, "current_puzzle": None, "puzzles": puzzles}
        (tmp_path / f"{n}.json").write_text(json.dumps(export))
    done = gpu_tutor("report", *(str(tmp_path / f"{n}.json") for n in range(100)), "--csv", str(tmp_path / "c.csv"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    shown = lines[lines.index(MISCONCEPTIONS_TITLE):next(n for n, line in enumerate(lines) if line.startswith("wrote"))]
    assert max(len(line) for line in shown) <= 80, [line for line in shown if len(line) > 80]
    assert "perf_transpose_padded" in "\n".join(shown) and "perf_transpose_shared" in "\n".join(shown)
    counted = [line.split()[-4:] for line in shown if "│" in line and line.split()[0] in pids]
    assert [sum(map(int, counts)) for counts in counted] == [100, 100, 100]
    assert rows_of(tmp_path / "c-over-time.csv")[-1]["solved_so_far"] == "100"
