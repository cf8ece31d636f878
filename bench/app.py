"""App benchmarks: cold start, ctrl+r to the grid, key-to-screen, quit, and the CLI from a cold shell.

    .venv/bin/python bench/app.py [--rounds 5]                       # this tree only
    .venv/bin/python bench/app.py --base /tmp/main --rounds 3        # and a checkout of main, interleaved
    .venv/bin/python bench/app.py --base /tmp/main --load            # the same beside a CPU hog per core
    .venv/bin/python bench/app.py --only keys,quit,cli               # some sections

1. Cold start to the first painted frame: fresh processes, ours and a bare Textual app showing the
   same three widget kinds (Markdown, a Python code editor, a plain widget), interleaved, each
   exiting right after its first refresh. Target: ours at most 1.5x the bare app (median ratio).
2. ctrl+r to the grid painted, for every classic puzzle on the simulator with a warm child:
   the reference solution run from the app, timed from the key press until the verdict and the
   thread grid have been drawn. Target: median under 150 ms on this 2-core machine.
3. Key to screen (issue 37): in a Pilot at 120x40, one fresh app process per tree and round, each
   key posted to the driver's queue as a terminal's would be, and every frame the app paints
   recorded (the compositor's update rendered to the bytes a terminal gets, as the real driver
   does, then the screen's text read back). "first": from the key to the first painted frame whose
   text differs from the screen before the key (the 100 ms rule: something on screen). "settled":
   to the first frame from which the screen stays as it finally is (the screen 0.5 s after the last
   frame): the 300 ms rule for zoom, help and a puzzle switch. Keys: the focus keys, zoom in and
   out from the code and the lesson, F1 and escape, ctrl+n and ctrl+b, a letter and backspace in the
   editor, ctrl+r's first answer (its busy state), on map and on softmax_row (whose next puzzle has
   an indented code block).
4. Quit: the real `gpu-tutor` in a pseudo-terminal of 120x40; ctrl+q once the app and its children
   are idle ("warm"), and 0.3 s after the first frame ("early", the children still importing numba):
   to the terminal given back (the alternate screen left) and to the process's exit (the prompt).
   Target: under 300 ms. Children still alive after the exit are counted.
5. The CLI from a cold shell: `gpu-tutor check PUZZLE reference.py` for every classic puzzle, and
   `trace`, `profile` and `hint --offline` of dot's starter, each a fresh process, compiled-module
   cache on (as after an install). Target: check under 1.5 s.
`--base PATH` measures another checkout (main) in the same run, round by round interleaved, with
the same bench code. `--load` starts one `while 1: pass` process per core beside everything and
stops them at the end. Ratios measured in the same run are the figures; absolute times on a shared
machine are context.
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


# -- key to screen -----------------------------------------------------------------------------------
# (name, key, what the key does before it is measured): "pre" keys are pressed, unmeasured, first.
KEYS = [
    ("focus lesson (ctrl+l)", "ctrl+l", ()), ("focus code (ctrl+e)", "ctrl+e", ()),
    ("focus grid (ctrl+g)", "ctrl+g", ()), ("next pane (f4)", "f4", ("ctrl+e",)),
    ("zoom code in (ctrl+f)", "ctrl+f", ("ctrl+e",)), ("zoom code out (ctrl+f)", "ctrl+f", ()),
    ("zoom lesson in (ctrl+f)", "ctrl+f", ("ctrl+l",)), ("zoom lesson out (ctrl+f)", "ctrl+f", ()),
    ("help open (f1)", "f1", ("ctrl+e",)), ("help close (escape)", "escape", ()),
    ("next puzzle (ctrl+n)", "ctrl+n", ("ctrl+e",)), ("previous puzzle (ctrl+b)", "ctrl+b", ()),
    ("a letter in the editor", "x", ("ctrl+e",)), ("backspace in the editor", "backspace", ()),
    ("run (ctrl+r), its busy state", "ctrl+r", ("ctrl+e",)),
]
KEY_PUZZLES = ("map", "softmax_row")
QUIET = 0.5  # a screen with no frame for this long has settled


class Frames:
    """Every frame the app paints: (when, the screen's text). The update is first rendered to the
    bytes a terminal would get (the headless driver skips that; the real one pays it), then the
    whole screen is read back from the compositor for the comparison."""

    def __init__(self, app):
        from textual._compositor import CompositorUpdate

        self.app, self.frames = app, []
        original = app._display

        def display(screen, renderable):
            original(screen, renderable)
            if renderable is None or app._batch_count:
                return
            if isinstance(renderable, CompositorUpdate):
                renderable.render_segments(app.console)
            self.frames.append((time.perf_counter(), screen_text(app)))

        app._display = display

    async def settled(self, cap: float = 10.0) -> None:
        start = time.perf_counter()
        while time.perf_counter() - start < cap:
            last = self.frames[-1][0] if self.frames else start
            if time.perf_counter() - max(last, start) > QUIET:
                return
            await asyncio.sleep(0.005)


def screen_text(app) -> str:
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    return "\n".join("".join(seg.text for strip in line for seg in strip) for line in update.strips)


async def press_and_time(app, frames: Frames, key: str) -> tuple[float | None, float | None]:
    """(first, settled) in seconds for one key, None where no frame changed the screen."""
    from textual import events

    await frames.settled()
    before, n = screen_text(app), len(frames.frames)
    char = key if len(key) == 1 else None
    event = events.Key(key, char)
    event.set_sender(app)
    t0 = time.perf_counter()
    app._driver.send_message(event)
    await frames.settled()
    final, new = screen_text(app), frames.frames[n:]
    first = next((t - t0 for t, text in new if text != before), None)
    settled = None
    if final != before:
        for i, (t, _) in enumerate(new):
            if all(text == final for _, text in new[i:]):
                settled = t - t0
                break
    return first, settled


async def keys_child(data: str, repeats: int) -> None:
    """One tree's app, every key of KEYS `repeats` times on each puzzle: JSON lines on stdout."""
    import json

    from textual import events

    from tutor.app.app import make_app

    for puzzle in KEY_PUZZLES:
        app = make_app(data_dir=tempfile.mkdtemp(dir=data), backend="sim", seed=1, repeatable=True, puzzle=puzzle)
        async with app.run_test(size=(120, 40)):
            frames = Frames(app)
            app.runner.start()
            await asyncio.to_thread(app.runner.wait_ready)  # the children warm: numba's import is not a key's
            for _ in range(repeats):
                for name, key, pre in KEYS:
                    for k in pre:
                        event = events.Key(k, None)
                        event.set_sender(app)
                        app._driver.send_message(event)
                        await frames.settled()
                    first, settled = await press_and_time(app, frames, key)
                    print(json.dumps({"puzzle": puzzle, "key": name, "first": first, "settled": settled}), flush=True)
                if app.puzzle.id != puzzle:
                    app.load_puzzle(puzzle)
                    await frames.settled()


def keys_section(trees: dict, rounds: int, repeats: int, env: dict) -> None:
    import json

    samples: dict = {}  # (tree, key) -> {"first": [...], "settled": [...]}
    for r in range(rounds):
        for tree in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
            data = tempfile.mkdtemp()
            out = subprocess.run([sys.executable, __file__, "--child", "keys", data, str(repeats)], check=True,
                                 env={**env, "PYTHONPATH": trees[tree]}, capture_output=True, text=True,
                                 cwd=trees[tree]).stdout
            for line in out.splitlines():
                row = json.loads(line)
                got = samples.setdefault((tree, row["key"]), {"first": [], "settled": []})
                for kind in ("first", "settled"):
                    if row[kind] is not None:
                        got[kind].append(row[kind] * 1000)
    print()
    print(f"Key to screen at 120x40 (Pilot, ms; {rounds} rounds x {repeats} presses x {len(KEY_PUZZLES)} puzzles "
          f"({', '.join(KEY_PUZZLES)}), fresh app per round; median (max))")
    names = list(trees)
    head = "  | key | " + " | ".join(f"{t} first | {t} settled" for t in names) + " |"
    print(head)
    print("  |---|" + "---|---|" * len(names))
    for name, _, _ in KEYS:
        cells = []
        for tree in names:
            got = samples.get((tree, name), {"first": [], "settled": []})
            for kind in ("first", "settled"):
                values = got[kind]
                cells.append(f"{statistics.median(values):.0f} ({max(values):.0f})" if values else "-")
        print(f"  | {name} | " + " | ".join(cells) + " |")


# -- quit in a real terminal --------------------------------------------------------------------------
def quit_section(trees: dict, rounds: int, env: dict) -> None:
    results: dict = {}
    for r in range(rounds):
        for tree in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
            for when in ("warm", "early"):
                results.setdefault((tree, when), []).append(quit_once(trees[tree], when, env))
    print()
    print(f"Quit (ctrl+q) of the real app in a 120x40 pseudo-terminal, {rounds} rounds; ms, median (max)")
    print("  | tree | when | to the terminal given back | to the process's exit | children left |")
    print("  |---|---|---|---|---|")
    for (tree, when), got in results.items():
        hidden = [g[0] for g in got if g[0] is not None]
        ended = [g[1] for g in got if g[1] is not None]
        left = sum(g[2] for g in got)
        cell = lambda v: f"{statistics.median(v):.0f} ({max(v):.0f})" if v else "-"  # noqa: E731
        print(f"  | {tree} | {when} | {cell(hidden)} | {cell(ended)} | {left} |")
    print("  (warm: the app and its children idle; early: 0.3 s after the first frame, the children still starting)")


def quit_once(tree: str, when: str, env: dict) -> tuple[float | None, float | None, int]:
    import fcntl
    import pty
    import select
    import signal
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    child_env = {k: v for k, v in env.items() if not k.startswith(("TEXTUAL", "COLUMNS", "LINES"))}
    child_env.update(TERM="xterm-256color", GPU_TUTOR_DATA=tempfile.mkdtemp(), PYTHONPATH=tree)
    proc = subprocess.Popen([sys.executable, "-m", "tutor.cli", "--puzzle", "map", "--backend", "sim"], stdin=slave,
                            stdout=slave, stderr=slave, env=child_env, cwd=tree, start_new_session=True,
                            close_fds=True)
    os.close(slave)
    screen = bytearray()

    def read(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            ready, _, _ = select.select([master], [], [], 0.002)
            if ready:
                try:
                    screen.extend(os.read(master, 65536))
                except OSError:
                    return

    try:
        deadline = time.perf_counter() + 60
        while b"Help" not in screen and time.perf_counter() < deadline:
            read(0.05)
        if when == "warm":
            kids = _children(proc.pid)
            while time.perf_counter() < deadline and (len(kids) < 2 or _busy([proc.pid, *kids])):
                kids = _children(proc.pid)
        else:
            read(0.3)
        kids = _children(proc.pid)
        mark = len(screen)
        t0 = time.perf_counter()
        os.write(master, b"\x11")
        hidden = ended = None
        while time.perf_counter() - t0 < 30:
            read(0.002)
            if hidden is None and b"\x1b[?1049l" in screen[mark:]:
                hidden = time.perf_counter() - t0
            if proc.poll() is not None:
                ended = time.perf_counter() - t0
                break
        time.sleep(0.2)
        left = sum(1 for pid in kids if os.path.exists(f"/proc/{pid}") and not _zombie(pid))
        return (hidden * 1000 if hidden is not None else None, ended * 1000 if ended is not None else None, left)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(master)


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat[stat.rfind(b")") + 2:].split()[1]) == pid:
                found.append(int(entry))
    return found


def _cpu_ticks(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError):
            pass
    return total


def _busy(pids: list[int], window: float = 0.5) -> bool:
    """Used more than a tenth of a core over the window."""
    before = _cpu_ticks(pids)
    time.sleep(window)
    return (_cpu_ticks(pids) - before) / os.sysconf("SC_CLK_TCK") > 0.1 * window


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rfind(b")") + 2:].split()[0] in (b"Z", b"X")
    except OSError:
        return True


# -- the CLI from a cold shell ------------------------------------------------------------------------
def cli_section(trees: dict, rounds: int, env: dict) -> None:
    from tutor.puzzles import load_catalog

    classic = [p.id for p in load_catalog().ordered() if p.track == "classic"]
    commands = [(f"check {pid}", ["check", pid, f"content/{pid}/reference.py", "--backend", "sim"]) for pid in classic]
    starter = tempfile.mktemp(suffix=".py")
    Path(starter).write_text(load_catalog().get("dot").starter)
    commands += [("trace dot (starter)", ["trace", "dot", starter]),
                 ("profile dot (starter)", ["profile", "dot", starter]),
                 ("hint dot --offline (starter)", ["hint", "dot", starter, "--offline"])]
    times: dict = {}
    cpu: dict = {}
    for r in range(rounds):
        for tree in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
            for name, args in commands:
                child_env = {**env, "PYTHONPATH": trees[tree], "GPU_TUTOR_DATA": tempfile.mkdtemp()}
                used = _children_cpu()
                t = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "tutor.cli", *args], env=child_env, cwd=trees[tree],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                times.setdefault((tree, name), []).append((time.perf_counter() - t) * 1000)
                cpu.setdefault((tree, name), []).append((_children_cpu() - used) * 1000)
                if done.returncode not in (0, 1):
                    raise SystemExit(f"{tree}: gpu-tutor {' '.join(args)} failed: {done.stderr[-500:]}")
    names = list(trees)
    print()
    print(f"The CLI from a cold shell (a fresh process each, simulator backend, {rounds} rounds): wall ms, median "
          "(max), and the CPU ms of the command and its children (median), which other work on the machine "
          "changes less")
    print("  | command | " + " | ".join(f"{t} wall | {t} CPU" for t in names)
          + (" | wall ratio | CPU ratio |" if len(names) == 2 else " |"))
    print("  |---|" + "---|---|" * len(names) + ("---|---|" if len(names) == 2 else ""))
    checks = {tree: [] for tree in names}
    for name, _ in commands:
        cells = [f"{statistics.median(times[(t, name)]):.0f} ({max(times[(t, name)]):.0f}) | "
                 f"{statistics.median(cpu[(t, name)]):.0f}" for t in names]
        ratio = ""
        if len(names) == 2:
            wall = statistics.median(times[(names[1], name)]) / statistics.median(times[(names[0], name)])
            used = statistics.median(cpu[(names[1], name)]) / statistics.median(cpu[(names[0], name)])
            ratio = f" | {wall:.2f}x | {used:.2f}x"
        print(f"  | {name} | " + " | ".join(cells) + ratio + " |")
        if name.startswith("check"):
            for t in names:
                checks[t].append(statistics.median(times[(t, name)]))
    for t in names:
        worst = max(checks[t])
        print(f"  {t}: check, median over the classic puzzles {statistics.median(checks[t]):.0f} ms, slowest "
              f"{worst:.0f} ms; target < 1500 ms: {'met' if worst < 1500 else 'NOT met'}")


def _children_cpu() -> float:
    """CPU seconds of every waited-for child so far (a command's own children included)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _prepared_env(trees: dict) -> dict:
    """As on a learner's machine: compiled modules cached (the sandboxed children cannot write them,
    and this workplace sets PYTHONDONTWRITEBYTECODE)."""
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["GPU_TUTOR_NO_GPU"] = "1"
    for tree in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(tree) / "tutor")], check=True, env=env,
                       stdout=subprocess.DEVNULL)
    return env


def start_hogs(n: int) -> list:
    return [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--base", default=None, help="another checkout (main) to measure in the same run")
    parser.add_argument("--load", action="store_true", help="a CPU hog per core beside everything")
    parser.add_argument("--only", default="start,grid,keys,quit,cli")
    parser.add_argument("--child", nargs="*")
    args = parser.parse_args()
    if args.child:
        kind = args.child[0]
        if kind == "keys":
            asyncio.run(keys_child(args.child[1], int(args.child[2])))
        else:
            child_bare() if kind == "bare" else child_ours(args.child[1])
        return
    only = set(args.only.split(","))
    trees = {"main": str(Path(args.base).resolve())} if args.base else {}
    trees["ours"] = str(ROOT)
    hogs = start_hogs(os.cpu_count() or 1) if args.load else []
    try:
        print(f"Machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start"
              + (f"; {len(hogs)} CPU hogs (`while 1: pass`) running beside every measurement" if hogs else
                 "; no hog of ours (other work on the machine goes on)"))
        if "start" in only:
            cold_start(args.rounds)
        if "grid" in only:
            asyncio.run(run_to_grid(args.repeats))
        env = _prepared_env(trees) if only & {"keys", "quit", "cli"} else {}
        if "keys" in only:
            keys_section(trees, args.rounds, max(1, args.repeats // 2), env)
        if "quit" in only:
            quit_section(trees, args.rounds, env)
        if "cli" in only:
            cli_section(trees, args.rounds, env)
        print(f"\nLoad average at the end: {os.getloadavg()[0]:.2f}")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


if __name__ == "__main__":
    main()
