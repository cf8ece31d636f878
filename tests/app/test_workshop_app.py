"""A workshop file driving the app: only its puzzles, its title, its solution policy, the learner's
name asked once, and a run that waits its turn on a shared GPU."""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from textual.widgets import Input, OptionList, TextArea

from tutor.app.app import make_app
from tutor.app.widgets.verdict import VerdictView
from tutor.store import Store
from tutor.workshop.config import load_workshop
from waiting import until
from warm_runners import app_runner

ROOT = Path(__file__).resolve().parents[2]


def write_workshop(tmp_path, catalog, extra=""):
    path = tmp_path / "friday.toml"
    path.write_text('title = "Friday GPU club"\npuzzles = ["dot", "map", "zip"]\n' + extra)
    return load_workshop(path, catalog)


def run_app(coro, tmp_path, workshop, backend="sim", size=(120, 40), runner=None):
    async def main():
        app = make_app(data_dir=tmp_path / "data", backend=backend, seed=1, workshop=workshop,
                       runner=runner or (app_runner(backend) if backend == "sim" else None))
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await coro(app, pilot)

    asyncio.run(main())


async def run_kernel(app, pilot, timeout=60.0):
    app.last_result = None
    await pilot.press("ctrl+r")
    await until(pilot, lambda: app.last_result is not None, timeout, "the run to finish")
    return app.last_result


def test_the_app_shows_only_the_workshop_puzzles_in_its_order_under_its_title(tmp_path, catalog):
    Store(tmp_path / "data").record_open("matmul")  # last time: a puzzle this workshop leaves out

    async def check(app, pilot):
        assert app.puzzle.id == "dot"
        assert app.title == "Friday GPU club · 1/3 Dot product" and "0/3 solved" in app.sub_title
        await pilot.press("ctrl+n")
        assert app.puzzle.id == "map" and app.title.startswith("Friday GPU club · 2/3 ")
        await pilot.press("ctrl+n", "ctrl+n")
        assert app.puzzle.id == "zip" and "3/3" in app.title
        await pilot.press("f2")
        await until(pilot, lambda: app.screen.query(OptionList), what="the puzzle list")
        options = app.screen.query_one(OptionList)
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert [i for i in ids if i] == ["dot", "map", "zip"]
        assert "Friday GPU club" in str(options.get_option_at_index(0).prompt)

    run_app(check, tmp_path, write_workshop(tmp_path, catalog))


def test_solutions_never_keeps_the_reference_closed_even_after_solving(tmp_path, catalog):
    async def check(app, pilot):
        app.load_puzzle("map")
        app.query_one("#editor", TextArea).load_text(catalog.get("map").reference)
        assert (await run_kernel(app, pilot)).verdict.passed
        await pilot.press("f3")
        await pilot.pause()
        assert type(app.screen).__name__ != "ReferenceScreen"

    run_app(check, tmp_path, write_workshop(tmp_path, catalog, 'solutions = "never"\n'))


def test_solutions_always_opens_the_reference_before_solving(tmp_path, catalog):
    async def check(app, pilot):
        assert not app.store.progress("dot").solved
        await pilot.press("f3")
        await until(pilot, lambda: type(app.screen).__name__ == "ReferenceScreen", what="the reference")

    run_app(check, tmp_path, write_workshop(tmp_path, catalog, 'solutions = "always"\n'))


def test_after_solving_is_the_default_policy(tmp_path, catalog):
    async def check(app, pilot):
        await pilot.press("f3")
        await pilot.pause()
        assert type(app.screen).__name__ != "ReferenceScreen"

    run_app(check, tmp_path, write_workshop(tmp_path, catalog))


def test_the_learners_name_is_asked_once_and_kept_in_their_data_folder(tmp_path, catalog):
    workshop = write_workshop(tmp_path, catalog, "ask_name = true\n")

    async def first_time(app, pilot):
        await until(pilot, lambda: type(app.screen).__name__ == "NameScreen", what="the name's question")
        await pilot.press("escape")  # a facilitator asked for names: escape does not skip it
        await pilot.press("enter")
        await pilot.pause()
        assert "Type your name" in str(app.screen.query_one("#name-problem").render())
        app.screen.query_one(Input).value = "  Ada   Lovelace "
        await pilot.press("enter")
        await until(pilot, lambda: type(app.screen).__name__ != "NameScreen", what="the question to close")

    run_app(first_time, tmp_path, workshop)
    saved = json.loads((tmp_path / "data" / "learner.json").read_text())
    assert saved["name"] == "Ada Lovelace" and saved["id"].startswith("learner-")

    async def second_time(app, pilot):
        await pilot.pause()
        assert type(app.screen).__name__ != "NameScreen"

    run_app(second_time, tmp_path, workshop)


def test_a_workshop_without_ask_name_never_asks(tmp_path, catalog):
    async def check(app, pilot):
        await pilot.pause()
        assert type(app.screen).__name__ != "NameScreen"

    run_app(check, tmp_path, write_workshop(tmp_path, catalog))


def test_a_gpu_workshop_on_a_machine_without_a_gpu_starts_on_the_simulator(tmp_path, catalog, monkeypatch):
    monkeypatch.setenv("GPU_TUTOR_NO_GPU", "1")

    async def check(app, pilot):
        assert app.backend == "sim"

    run_app(check, tmp_path, write_workshop(tmp_path, catalog, 'backend = "gpu"\n'), backend=None)


HOLDER = """
import sys
from tutor.engine.process.gpulock import GpuQueue
with GpuQueue(sys.argv[1]).turn():
    print("HELD", flush=True)
    sys.stdin.readline()
"""


def test_a_gpu_run_shows_how_many_are_ahead_while_another_learner_holds_the_gpu(tmp_path, catalog, monkeypatch):
    queue = tmp_path / "queue"
    monkeypatch.setenv("GPU_TUTOR_GPU_QUEUE", str(queue))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(queue)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert holder.stdout.readline().startswith("HELD")

    async def check(app, pilot):
        view = app.query_one(VerdictView)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: "waiting for GPU" in view.head_text, what="the run to say it waits")
        assert "waiting for GPU (1 ahead)" in view.head_text
        holder.stdin.write("\n")
        holder.stdin.flush()
        # our turn: the run goes ahead
        await until(pilot, lambda: app._running_since is None, timeout=120, what="the run to go ahead")
        shown = view.head_text
        assert "waiting for GPU" not in shown and "Traceback" not in shown

    # Numba's simulator stands in for the GPU, through the same queue: a machine without a GPU now
    # says so before queueing (tests/engine/test_gpu_turn.py), so it would never show the wait.
    from tutor.engine.process.gpulock import GpuQueue
    from tutor.engine.runner import Runner

    device = Runner("numba-sim", gpu_queue=GpuQueue(queue), with_simulator=False)
    try:
        device.wait_ready()
        run_app(check, tmp_path, write_workshop(tmp_path, catalog), backend="gpu", runner=device)
    finally:
        holder.kill()
        holder.wait()
        device.close()


def test_a_simulator_run_does_not_wait_for_the_gpu(tmp_path, catalog, monkeypatch):
    queue = tmp_path / "queue"
    monkeypatch.setenv("GPU_TUTOR_GPU_QUEUE", str(queue))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(queue)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert holder.stdout.readline().startswith("HELD")

    async def check(app, pilot):
        app.load_puzzle("map")
        app.query_one("#editor", TextArea).load_text(catalog.get("map").reference)
        assert (await run_kernel(app, pilot)).verdict.passed

    try:
        run_app(check, tmp_path, write_workshop(tmp_path, catalog))
    finally:
        holder.kill()
        holder.wait()
