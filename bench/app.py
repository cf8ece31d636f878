"""App benchmarks: cold start against a bare Textual app, and ctrl+r to the thread grid painted.

    .venv/bin/python bench/app.py [--rounds 5]

1. Cold start to the first painted frame: fresh processes, ours and a bare Textual app showing the
   same three widget kinds (Markdown, a Python code editor, a plain widget), interleaved, each
   exiting right after its first refresh. Target: ours at most 1.5x the bare app (median ratio).
2. ctrl+r to the grid painted, for every classic puzzle on the simulator with a warm child:
   the reference solution run from the app, timed from the key press until the verdict and the
   thread grid have been drawn. Target: median under 150 ms on this 2-core machine.
Ratios measured in the same run are the figures; absolute times on a shared machine are context.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# -- child processes for the cold start ------------------------------------------------------------
def child_bare() -> None:
    from textual.app import App
    from textual.containers import Horizontal
    from textual.widgets import Footer, Header, Markdown, Static, TextArea

    class Bare(App):
        def compose(self):
            yield Header()
            with Horizontal():
                yield Markdown("# Lesson\n\nSome text.")
                yield TextArea.code_editor("from numba import cuda\n", language="python")
                yield Static("threads")
            yield Footer()

        def on_mount(self):
            self.call_after_refresh(self.exit)

    Bare().run(headless=True, size=(120, 40))


def child_ours(data_dir: str) -> None:
    from tutor.app.app import TutorApp, make_app

    app = make_app(data_dir=data_dir, backend="sim")

    def exit_after_first_paint():
        app.exit()

    original = TutorApp.on_mount

    def on_mount(self):
        original(self)
        self.call_after_refresh(exit_after_first_paint)

    TutorApp.on_mount = on_mount
    app.run(headless=True, size=(120, 40))
    if "numba" in sys.modules or "litellm" in sys.modules:
        raise SystemExit("numba or litellm was imported at start")


def cold_start(rounds: int) -> None:
    data = tempfile.mkdtemp()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # As on a learner's machine: Python caches compiled modules (this workplace sets
    # PYTHONDONTWRITEBYTECODE, which would recompile our own source at every start). One unmeasured
    # start of each fills the cache.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for kind in ("bare", "ours"):
        subprocess.run([sys.executable, __file__, "--child", kind, data], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times = {"bare": [], "ours": []}
    ratios = []
    for r in range(rounds):
        order = ("bare", "ours") if r % 2 == 0 else ("ours", "bare")
        got = {}
        for kind in order:
            args = [sys.executable, __file__, "--child", kind, data]
            t = time.perf_counter()
            subprocess.run(args, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            got[kind] = time.perf_counter() - t
            times[kind].append(got[kind])
        ratios.append(got["ours"] / got["bare"])
    print("Cold start to the first painted frame (fresh process each, interleaved; includes Python's start;"
          " compiled-module cache on, as for a learner)")
    print(f"  rounds: {rounds}")
    print(f"  bare Textual app: median {statistics.median(times['bare']) * 1000:.0f} ms")
    print(f"  gpu-tutor app:    median {statistics.median(times['ours']) * 1000:.0f} ms")
    med = statistics.median(ratios)
    print(f"  ratio ours/bare:  median {med:.2f}x (spread {min(ratios):.2f}-{max(ratios):.2f}x)"
          f"  target <= 1.5x: {'met' if med <= 1.5 else 'NOT met'}")


# -- ctrl+r to the grid painted -------------------------------------------------------------------
async def run_to_grid(repeats: int) -> None:
    """From the run action (the key, once Textual has parsed it) to the first frame painted after
    the thread grid received the runs. Marks come from the app's own callbacks, so the test
    driver's waiting is not counted."""
    from textual.widgets import TextArea

    from tutor.app.app import TutorApp, make_app
    from tutor.app.widgets.thread_pane import ThreadPane
    from tutor.puzzles import load_catalog

    marks: dict = {}
    original_run, original_show = TutorApp.action_run, ThreadPane.show_runs

    def action_run(self):
        marks["pressed"] = time.perf_counter()
        original_run(self)

    def show_runs(self, runs):
        original_show(self, runs)
        if runs:
            self.app.call_after_refresh(lambda: marks.setdefault("painted", time.perf_counter()))

    TutorApp.action_run, ThreadPane.show_runs = action_run, show_runs
    catalog = load_catalog()
    classic = [p for p in catalog.ordered() if p.track == "classic"]
    app = make_app(data_dir=tempfile.mkdtemp(), backend="sim", seed=1)
    rows = []
    async with app.run_test(size=(120, 40)) as pilot:
        app.runner.start()
        app.runner.check("map", catalog.get("map").reference, "warm.py")  # warm child and compiler
        for puzzle in classic:
            app.load_puzzle(puzzle.id)
            app.query_one("#editor", TextArea).load_text(puzzle.reference)
            await pilot.pause()
            samples = []
            for _ in range(repeats + 1):
                app.last_result = None
                marks.clear()
                await pilot.press("ctrl+r")
                while "painted" not in marks or app.last_result is None:
                    await asyncio.sleep(0.001)
                samples.append(marks["painted"] - marks["pressed"])
                assert app.last_result.verdict.passed
            rows.append((puzzle.id, statistics.median(samples[1:]) * 1000, min(samples[1:]) * 1000,
                         max(samples[1:]) * 1000, samples[0] * 1000))
    print()
    print(f"ctrl+r to the grid painted, warm child, simulator (median of {repeats} after one first run)")
    print(f"  {'puzzle':<12} {'median ms':>9} {'min-max':>13} {'first run ms':>12}")
    for pid, med, lo, hi, first in rows:
        print(f"  {pid:<12} {med:9.0f} {lo:6.0f}-{hi:<6.0f} {first:12.0f}")
    overall = statistics.median(r[1] for r in rows)
    print(f"  median over puzzles: {overall:.0f} ms; slowest {max(r[1] for r in rows):.0f} ms"
          f"  target < 150 ms: {'met' if overall < 150 else 'NOT met'}")
    print("  (the grid paints with the simulator's verdict; the first run of a new text also waits for the\n"
          "   real compiler in a second child before the verdict is final, not before the grid paints)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child", nargs="*")
    args = parser.parse_args()
    if args.child:
        kind = args.child[0]
        child_bare() if kind == "bare" else child_ours(args.child[1])
        return
    cold_start(args.rounds)
    asyncio.run(run_to_grid(args.repeats))


if __name__ == "__main__":
    main()
