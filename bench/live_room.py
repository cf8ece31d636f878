"""The facilitator's live view over a room of 100 learners: how long one refresh takes.

    .venv/bin/python bench/live_room.py                  # 100 learners, 15 repeats (~30 s on 2 cores)
    .venv/bin/python bench/live_room.py --learners 300 --repeats 5 --markdown out.md

The room is a served room's DATA folder (DATA/room.json, DATA/learners/*/) written by the real
store, as tests/workshop/room_fixture.py writes its 30: each learner opens puzzles, runs a kernel
every few minutes, takes hints, solves some, and their runs keep the summary the app keeps of
the real verdict. The verdicts are judged once per kernel (eleven kernels: the fixture's seven
beginners' mistakes and four references) and reused for every learner who runs that kernel.

Three refreshes are timed (`LiveRoom.refresh()`, which also groups the misconceptions):
- cold: a fresh LiveRoom each time, so every learner's folder is read: the baseline;
- unchanged: the same LiveRoom again with nothing changed (the view's refresh each second while
  the room is quiet);
- 10 changed: ten learners ran their code since the last refresh (written by the real store,
  outside the timing).
Each is repeated (min / median / max, ms) and set against the baseline measured in the same run.
The files are in the page cache (they were just written): "cold" means not yet read by this
LiveRoom, not read from the disk. The first refresh of the process is printed apart (the build
before it has already loaded the catalog and the modules).

The goal (issue 39): the live view over 100 learners' folders refreshes in under 1 s on this
machine, judged on the slowest refresh of any of the three kinds.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL_S = 1.0


def build(root: Path, n: int) -> Path:
    """A served room of `n` learners, in the fixture room's proportions (its 30-seat plan, repeated)."""
    from tests.workshop.room_fixture import PUZZLES, _working_on, learner

    root.mkdir(parents=True)
    (root / "room.json").write_text(json.dumps({"format": "gpu-tutor-room", "title": "bench", "puzzles": PUZZLES,
                                                "workshop": None}), encoding="utf-8")
    solved_map = [(58, "open", "map"), (55, "run", "map_reference")]
    spellings = ["dot_no_barrier", "dot_no_barrier_tid", "dot_no_barrier_inline"]
    for k in range(n):
        seat = k % 30
        if seat < 12:
            last = 15.5 if seat < 2 else 1 + seat % 4
            plan = solved_map + [(50, "open", "dot")] + _working_on(spellings[seat % 3], "dot", 49, last, hint=seat % 3)
        elif seat < 15:
            plan = solved_map + _working_on("dot_adds_into_out", "dot", 40, 2 + seat % 3)
        elif seat < 20:
            plan = _working_on("guard_no_guard", "guard", 30 - seat % 5, 1 + seat % 5)
        elif seat < 23:
            plan = _working_on("map_adds_one", "map", 20, 2 + seat % 3)
        elif seat < 25:
            plan = solved_map + _working_on("shared_barrier_in_guard", "shared", 35, 3 + seat % 2)
        elif seat < 27:
            plan = solved_map + [(40, "open", "guard"), (36, "run", "guard_reference")]
        else:
            plan = []
        learner(root, f"s{k + 1:03d}", f"Learner {k + 1:03d}", plan, closed=25 <= seat < 27)
    return root


def change(root: Path, folders: list[str], minute: float) -> None:
    """These learners run their code once more (the same kernel they were on), as the app records it."""
    from tests.workshop.room_fixture import NOW, kernels, verdict_of
    from tutor.store import Store

    for folder in folders:
        store = Store(root / "learners" / folder, clock=lambda: NOW + minute * 60)
        pid = store.last_puzzle or "map"
        name = next((k for k, (p, _) in kernels().items() if p == pid and not k.endswith("_reference")), "map_adds_one")
        store.save_code(kernels()[name][0], kernels()[name][1])
        passed, summary = verdict_of(name)
        store.record_run(kernels()[name][0], passed, summary)


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learners", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--changed", type=int, default=10, help="learners who run their code between two refreshes")
    ap.add_argument("--markdown", type=Path, default=None, help="also write the output here")
    args = ap.parse_args(argv)

    from tests.workshop.room_fixture import NOW
    from tutor.workshop.live import LiveRoom

    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    tmp = Path(tempfile.mkdtemp(prefix="live-room-"))
    try:
        t0 = time.perf_counter()
        root = build(tmp / "DATA", args.learners)
        built = time.perf_counter() - t0
        clock = lambda: NOW + 60.0  # noqa: E731
        first = timed(lambda: LiveRoom(root, clock=clock).refresh())
        picture = LiveRoom(root, clock=clock).refresh()
        assert len(picture.rows) == args.learners and not picture.problems, picture.problems

        cold = [timed(lambda: LiveRoom(root, clock=clock).refresh()) for _ in range(args.repeats)]
        live = LiveRoom(root, clock=clock)
        live.refresh()
        unchanged = [timed(live.refresh) for _ in range(args.repeats)]
        folders = sorted(p.name for p in (root / "learners").iterdir())
        changed = []
        for r in range(args.repeats):
            chosen = [folders[(r * args.changed + j) % len(folders)] for j in range(args.changed)]
            change(root, chosen, minute=r + 1)
            changed.append(timed(live.refresh))
        last = live.refresh()
        assert len(last.rows) == args.learners

        say(f"live room: {args.learners} learners (built in {built:.1f} s), {args.repeats} repeats, "
            f"{len(picture.misconceptions)} misconceptions; the process's first refresh: {first * 1000:.0f} ms")
        say()
        say("| refresh | min ms | median ms | max ms | median / cold |")
        say("|---|---|---|---|---|")
        base = statistics.median(cold)
        for name, times in (("cold (fresh LiveRoom: baseline)", cold), ("nothing changed", unchanged),
                            (f"{args.changed} learners changed", changed)):
            med = statistics.median(times)
            say(f"| {name} | {min(times) * 1000:.1f} | {med * 1000:.1f} | {max(times) * 1000:.1f} | "
                f"{med / base:.2f}x |")
        slowest = max(cold + unchanged + changed)
        say()
        say(f"goal (issue 39: the live view over 100 learners' folders refreshes in under {GOAL_S:.0f} s): "
            f"{'MET' if slowest < GOAL_S else 'NOT MET'}: slowest refresh {slowest * 1000:.0f} ms"
            + ("" if args.learners >= 100 else f" (only {args.learners} learners: not the goal's room)"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.markdown:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
        head = [f"# bench/live_room.py: the facilitator's live view over {args.learners} learners", "",
                f"Command: `{' '.join(['.venv/bin/python', 'bench/live_room.py'] + (argv or sys.argv[1:]))}` "
                f"at {commit}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", ""]
        args.markdown.write_text("\n".join(head + lines + [""]), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
