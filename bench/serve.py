"""A served room in headless Chromium: how long a browser session takes to open, what each learner
costs in memory, and how long a run takes to its verdict, with one browser and with N at once.

    .venv/bin/python bench/serve.py --n 1,4 --json serve.json    # needs chromium and '.[browser]'

For each N it starts `gpu-tutor serve` on loopback (the simulator backend), opens N browser
sessions at once (a context each: its own cookies, so its own learner), and for each measures:
- start: from the link to the app's first screen (the name dialog) drawn in the page;
- run-to-verdict: from ctrl+r on the map starter to FAILED drawn (the compiler, then the simulator);
- memory: the learner's app process and its children (the sandboxed fork server and the spare
  child it forked for the next check), summed from /proc once every learner has run, twice: as
  resident memory (RSS: a page a fork shares is counted in each process) and as proportional memory
  (PSS: a shared page split among its sharers), which is what the machine really gives each learner.
The baseline is N = 1 in the same run: each row's ratio is its median over N = 1's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests" / "serve"), str(HERE.parent / "tests")]

from browser import Learner, launch  # noqa: E402
from room_server import RoomProcess  # noqa: E402


def rss_mb(pid: int) -> float:
    return _memory_mb(f"/proc/{pid}/status", "VmRSS:")


def pss_mb(pid: int) -> float:
    return _memory_mb(f"/proc/{pid}/smaps_rollup", "Pss:")


def _memory_mb(path: str, key: str) -> float:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children(p)
    return out


def drawn_at(learners, text: str, timeout: float, since=None) -> list[float]:
    """When `text` was first drawn on each learner's screen, polled round-robin every 20 ms (one
    page's wait lets Playwright deliver every page's frames, so waiting on each in turn would time
    the later ones by the first)."""
    since = since or [0] * len(learners)
    seen: dict[int, float] = {}
    start = time.monotonic()
    while len(seen) < len(learners):
        for k, learner in enumerate(learners):
            if k not in seen and text in learner.screen()[since[k]:]:
                seen[k] = time.monotonic()
        if time.monotonic() - start > timeout:
            raise AssertionError(f"{text!r} never drawn for learners {sorted(set(range(len(learners))) - set(seen))}")
        learners[0].page.wait_for_timeout(20)
    return [seen[k] for k in range(len(learners))]


def one_room(n: int, playwright) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        room = RoomProcess(Path(tmp) / "room")
        try:
            browser = launch(playwright)
            learners = [Learner(browser, Path(tmp), f"l{k}") for k in range(n)]
            begun = time.monotonic()
            for learner in learners:
                learner.page.goto(room.url, wait_until="commit")
            starts = [t - begun for t in drawn_at(learners, "Welcome to", 120)]
            for k, learner in enumerate(learners):
                learner.page.click("#terminal")
                learner.keys(f"Learner {k}", "<Enter>")
            for learner in learners:
                learner.wait_for("Map", 60)
            marks = [len(learner.screen()) for learner in learners]
            pressed = time.monotonic()
            for learner in learners:
                learner.page.keyboard.press("Control+r")
            runs = [t - pressed for t in drawn_at(learners, "FAILED", 180, marks)]
            apps = [c for c in children(room.proc.pid)]
            per_learner = [sum(rss_mb(p) for p in tree(app)) for app in apps]
            per_learner_pss = [sum(pss_mb(p) for p in tree(app)) for app in apps]
            server_mb = rss_mb(room.proc.pid)
            browser.close()
        finally:
            room.stop()
    return {"n": n, "start_s": starts, "run_s": runs, "learner_mb": per_learner, "learner_pss_mb": per_learner_pss,
            "server_mb": server_mb}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", default="1,4", help="browser sessions at once, comma separated (default 1,4)")
    parser.add_argument("--json", default=None, help="write every measurement here")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    os.environ["GPU_TUTOR_NO_GPU"] = "1"
    rows = []
    with sync_playwright() as p:
        for n in (int(x) for x in args.n.split(",")):
            rows.append(one_room(n, p))
    base = rows[0]
    print(f"served room, simulator backend, {os.cpu_count()} cores; ratios against N = {base['n']} in this run")
    print(f"{'N':>3}  {'start median / max s':>21}  {'ratio':>5}  {'run-to-verdict median / max s':>30}  "
          f"{'ratio':>5}  {'per learner MB, RSS / PSS':>25}  {'server MB':>9}")
    for row in rows:
        s, r = row["start_s"], row["run_s"]
        print(f"{row['n']:>3}  {statistics.median(s):>10.2f} / {max(s):<8.2f}  "
              f"{statistics.median(s) / statistics.median(base['start_s']):>5.2f}  "
              f"{statistics.median(r):>19.2f} / {max(r):<8.2f}  "
              f"{statistics.median(r) / statistics.median(base['run_s']):>5.2f}  "
              f"{statistics.median(row['learner_mb']):>14.0f} / {statistics.median(row['learner_pss_mb']):<8.0f}  "
              f"{row['server_mb']:>9.0f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
