"""One wording for the optimiser, whichever view shows it: the CLI prints and the app's screens
show the same words for an attempt, the end of a session, the worked answer and the task list,
and both put the log where log_path_for says. The CLI runs in this process (its model call
replaced by a canned session where one is needed); the app is driven by Textual's pilot."""

import asyncio
import re
import time
from dataclasses import asdict

from textual.widgets import DataTable, OptionList, Static

from tutor.ai.config import AISettings
from tutor.app.app import TutorApp, make_app
from tutor.coach import optimise as opt
from tutor.coach.optimise import Attempt, OptimiseLog, OptimiseResult, TaskTarget
from tutor.coach.tasks import coaching_tasks, load_task
from waiting import until
from warm_runners import app_runner

NAIVE = load_task("reduce_sum").source("naive")
FASTER = NAIVE + "# the same kernel, sent as faster\n"
MODEL = AISettings(model="openai/tiny", api_base="http://127.0.0.1:9/v1")


def attempt(round_no, sample=0, **fields) -> Attempt:
    base = dict(round=round_no, sample=sample, model="openai/tiny", prompt_hash="p", prompt_tokens=1200,
                completion_tokens=300, cost_usd=None, latency_s=2.5, code_hash=None, code=None, correct=False,
                compiled=False, failures=[], score=None, score_kind=None, timing=None, flags=[], explanation="")
    return Attempt(**{**base, **fields})


# Every kind of attempt a session shows: a failed call, no code, rejected, correct with and
# without a score, flagged, and samples of one round.
ATTEMPTS = [
    attempt(1, error="the server answered 500", error_kind="server", prompt_tokens=None, completion_tokens=None),
    attempt(2),
    attempt(3, code=FASTER, compiled=True, failures=[{"kind": "wrong_output"}, {"kind": "race"}]),
    attempt(4, 1, code=FASTER, correct=True, compiled=True, score=1.5, score_kind="modelled"),
    attempt(4, 2, code=FASTER, correct=True, compiled=True, score=12.0, score_kind="speedup", cost_usd=0.0021,
            flags=["a speedup above 10x is flagged for review"], explanation="Tiles of 256, one atomic per block."),
    attempt(5, code=FASTER, correct=True, compiled=True),
]


def result(best=ATTEMPTS[4], stop_reason="rounds") -> OptimiseResult:
    return OptimiseResult("reduce_sum", "sim", ATTEMPTS, best, stop_reason, NAIVE, 12.3)


def cli(monkeypatch, capsys, tmp_path, *argv, config=""):
    """`gpu-tutor ARGV` in this process: (exit code, stdout lines, stderr lines)."""
    from tutor.cli import main

    (tmp_path / "config.toml").write_text(config)
    monkeypatch.setenv("GPU_TUTOR_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("GPU_TUTOR_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("GPU_TUTOR_NO_GPU", "1")
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


def naive_file(tmp_path):
    path = tmp_path / "naive.py"
    path.write_text(NAIVE)
    return path


def run_app(coro, tmp_path, settings):
    async def main():
        app = make_app(data_dir=tmp_path / "app", backend="sim", seed=1, ai_settings=settings,
                       runner=app_runner())
        async with app.run_test(size=(130, 45)) as pilot:
            await pilot.pause()
            await coro(app, pilot)

    asyncio.run(main())


async def optimise_screen(app, pilot, tmp_path):
    from tutor.app.screens.optimise import OptimiseScreen

    screen = OptimiseScreen(TaskTarget("reduce_sum", "sim"), NAIVE, app.ai_settings, tmp_path / "saved",
                            tmp_path / "app")
    app.push_screen(screen)
    await until(pilot, lambda: app.screen is screen and screen.is_mounted, what="the optimiser")
    return screen


def test_an_attempts_line_is_the_same_in_the_cli_and_the_app(tmp_path, monkeypatch, capsys):
    log = tmp_path / "session.jsonl"
    OptimiseLog(log).write({"event": "start", "target": "reduce_sum", "backend": "sim", "model": "openai/tiny"})
    for a in ATTEMPTS:
        OptimiseLog(log).write({"event": "attempt", **asdict(a)})
    code, out, _ = cli(monkeypatch, capsys, tmp_path, "optimise", "--replay", str(log))
    assert code == 0
    printed = out[1:]
    assert len(printed) == len(ATTEMPTS)
    shown = []

    async def check(app, pilot):
        screen = await optimise_screen(app, pilot, tmp_path)
        for a in ATTEMPTS:
            screen._event("attempt", a)
        await pilot.pause()
        table = screen.query_one("#opt-rounds", DataTable)
        shown.extend(str(table.get_row_at(i)[0]) for i in range(table.row_count))

    run_app(check, tmp_path, MODEL)
    assert shown == printed
    assert printed[0] == "round 1: model call failed: the server answered 500"
    assert printed[2] == "round 3: REJECTED (race, wrong_output), 1500 tokens"
    assert printed[4] == ("round 4.2: correct, 12.00x (speedup) FLAGGED, 1500 tokens, $0.0021")


def _session_in_the_cli(monkeypatch, capsys, tmp_path, canned, *flags):
    monkeypatch.setattr(opt, "optimise", lambda *a, **k: canned)
    return cli(monkeypatch, capsys, tmp_path, "optimise", "reduce_sum", str(naive_file(tmp_path)), "--model",
               "openai/tiny", "--api-base", "http://127.0.0.1:9/v1", "--backend", "sim", "--budget", "3s",
               "--log", str(tmp_path / "session.jsonl"), *flags)


def _session_in_the_app(tmp_path, canned):
    """The app's status and explanation at the end of the same session, its log the CLI's."""
    seen = {}

    async def check(app, pilot):
        screen = await optimise_screen(app, pilot, tmp_path)
        screen._budget, screen._started = opt.Budget(wall_s=3.0), time.monotonic()
        screen._finished(canned, tmp_path / "session.jsonl")
        await pilot.pause()
        seen["status"] = str(screen.query_one("#opt-status", Static).render()).splitlines()
        seen["why"] = screen.query_one("#opt-why").source

    run_app(check, tmp_path, MODEL)
    return seen


def test_the_end_of_a_session_is_worded_the_same_in_the_cli_and_the_app(tmp_path, monkeypatch, capsys):
    canned = result()
    code, out, _ = _session_in_the_cli(monkeypatch, capsys, tmp_path, canned)
    assert code == 0
    app = _session_in_the_app(tmp_path, canned)
    assert app["status"][:2] == out[:2]
    assert out[0] == (f"stopped (rounds: every round of the budget was spent) after 5 round(s), 12 s, "
                      f"6000 + 1500 tokens, $0.0021; log: {tmp_path / 'session.jsonl'}")
    assert out[1] == ("best: round 4.2, 12.00x speedup (GPU, verified); flagged for review: a speedup above 10x "
                      "is flagged for review")
    heading = next(line for line in out if line.startswith("Why it is faster"))
    assert app["why"].splitlines()[0] == f"### {heading.rstrip(':')}"
    assert heading == f"{opt.EXPLANATION_HEADING}:" and "not checked by the verifier" in heading


def test_no_verified_candidate_and_the_wall_time_spent_are_worded_the_same(tmp_path, monkeypatch, capsys):
    canned = result(best=None, stop_reason="time")
    code, out, err = _session_in_the_cli(monkeypatch, capsys, tmp_path, canned)
    assert code == 1
    app = _session_in_the_app(tmp_path, canned)
    assert out == [app["status"][0], app["status"][2]]
    assert out[1] == "No verified candidate: your kernel stays as it is."
    # The budget ran out: the same sentence, each view with its own way to give it more.
    cli_spent, app_spent = err[-1], app["status"][1]
    assert cli_spent.split(" Give it more ")[0] == app_spent.split(" Give it more ")[0]
    assert cli_spent.split(", or set ")[1] == app_spent.split(", or set ")[1]
    assert cli_spent.startswith("The wall-time budget of 3s ran out: it counts the model's replies")
    assert "Give it more with --budget 6s" in cli_spent and "by opening the optimiser again" in app_spent


def test_both_views_put_the_log_where_log_path_for_says(tmp_path, monkeypatch, capsys):
    made = []

    def recording(name, root):
        made.append((name, root, original(name, root)))
        return made[-1][2]

    original = opt.log_path_for
    monkeypatch.setattr(opt, "log_path_for", recording)
    logs = []
    monkeypatch.setattr(opt, "optimise", lambda *a, log_path=None, **k: (logs.append(log_path), result())[1])
    code, out, _ = cli(monkeypatch, capsys, tmp_path, "optimise", "reduce_sum", str(naive_file(tmp_path)),
                       "--model", "openai/tiny", "--api-base", "http://127.0.0.1:9/v1", "--backend", "sim")
    assert code == 0 and made == [("reduce_sum", tmp_path / "data", logs[0])]
    assert out[0].endswith(f"; log: {logs[0]}")

    async def check(app, pilot):
        screen = await optimise_screen(app, pilot, tmp_path)
        screen.start()
        await until(pilot, lambda: screen.result is not None, what="the optimiser to finish")

    run_app(check, tmp_path, MODEL)
    assert made[1] == ("reduce_sum", tmp_path / "app", logs[1])
    assert logs[1].parent == tmp_path / "app" / "optimise" and logs[0].parent == tmp_path / "data" / "optimise"


def test_the_worked_answer_is_the_same_in_the_cli_and_the_app(tmp_path, monkeypatch, capsys):
    code, out, err = cli(monkeypatch, capsys, tmp_path, "optimise", "reduce_sum", str(naive_file(tmp_path)),
                         "--backend", "sim", config="[policy]\nfull_code_hints = true\n")
    assert code == 2 and "no model is configured" in err[0]
    notice, code_shown, pointer = out[0], "\n".join(out[2:-2]), out[-1]
    assert out[-2] == "" and pointer == "How an expert gets there, a change at a time: gpu-tutor walkthrough reduce_sum"
    assert notice == ("Your facilitator's policy allows the worked answer instead: the expert kernel "
                      "(kernels/reduce_sum/expert.py).")
    seen = {}

    async def check(app, pilot):
        app.action_optimise_task()
        await until(pilot, lambda: type(app.screen).__name__ == "TaskPicker", what="the task picker")
        app.screen.dismiss("reduce_sum")
        await until(pilot, lambda: type(app.screen).__name__ != "TaskPicker", what="the picker to close")
        await pilot.pause()
        seen["screen"] = type(app.screen).__name__
        seen["code"] = app.screen.query_one("#theirs").text
        seen["notice"] = str(app.screen.query_one("#reference-notice", Static).render())
        seen["walkthrough"] = app.screen.query_one("#walkthrough").source

    run_app(check, tmp_path, AISettings(full_code_hints=True))
    assert seen["screen"] == "ReferenceScreen"
    assert seen["code"].strip() == code_shown.strip() == load_task("reduce_sum").source("expert").strip()
    assert seen["notice"].endswith(f" {notice}"), seen["notice"]
    assert seen["walkthrough"].startswith("### Sum reduction: from the naive kernel to the expert one")


def test_without_full_code_no_view_shows_a_worked_answer_nor_does_the_app_under_closed_references(
        tmp_path, monkeypatch, capsys, catalog):
    code, out, err = cli(monkeypatch, capsys, tmp_path, "optimise", "reduce_sum", str(naive_file(tmp_path)),
                         "--backend", "sim")
    assert code == 2 and out == [] and err[-1] == "Configure a model (`gpu-tutor doctor`) to run the optimiser."
    task = TaskTarget("reduce_sum")
    puzzle = opt.PuzzleTarget(catalog.get("map"), catalog.get("map").reference)
    assert opt.worked_answer(task, AISettings()) is None and opt.worked_answer(puzzle, AISettings()) is None
    assert opt.worked_answer(puzzle, AISettings(full_code_hints=True)).reference == catalog.get("map").reference
    # A workshop with references closed: the app no longer announces a worked answer it then refuses.
    monkeypatch.setattr(TutorApp, "solutions_policy", property(lambda self: "never"))
    seen = {}

    async def check(app, pilot):
        app._worked_answer(puzzle, puzzle.start_source, "no model is configured")
        await pilot.pause()
        seen["screen"] = type(app.screen).__name__
        seen["notes"] = [str(n.message) for n in app._notifications]

    run_app(check, tmp_path, AISettings(full_code_hints=True))
    assert seen["screen"] != "ReferenceScreen"
    assert not any("allows the worked answer" in n for n in seen["notes"])
    assert any("turned reference solutions off" in n for n in seen["notes"]), seen["notes"]


def test_the_cli_and_the_apps_picker_offer_the_same_coaching_tasks(tmp_path, monkeypatch, capsys):
    code, _, err = cli(monkeypatch, capsys, tmp_path, "optimise", "no_such_target", str(naive_file(tmp_path)),
                       "--backend", "sim")
    assert code == 2
    m = re.search(r"unknown target 'no_such_target': neither a coaching task \(([^)]*)\) nor a puzzle", err[0])
    assert m, err
    named = m.group(1).split(", ")
    offered = []

    async def check(app, pilot):
        app.action_optimise_task()
        await until(pilot, lambda: app.screen.query("#task-list"), what="the task picker's list")
        options = app.screen.query_one("#task-list", OptionList)
        offered.extend(options.get_option_at_index(i).id for i in range(options.option_count))

    run_app(check, tmp_path, MODEL)
    assert named == offered == [t.name for t in coaching_tasks()]
    assert "reduce_sum" in named and "softmax" in named
