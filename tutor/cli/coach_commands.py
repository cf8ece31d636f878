"""The coach's commands: `verify` (judge a candidate kernel against a coaching task) and `optimise`
(a model proposes faster kernels, the verifier judges each, within a budget), with the helpers that
turn optimise's flags into a budget and a target.

Kept apart from the puzzle commands because they work on coaching tasks under kernels/ (or a solved
puzzle) and import the coach, which loads only when one of them runs.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tutor.puzzles import load_catalog
from tutor.textsafe import terminal_safe
from .inputs import UsageError


def cmd_verify(args) -> int:
    from tutor.coach.verify import verify
    from ..engine.views.textview import verdict_text

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {args.file}")
    try:
        result = verify(args.task, path.read_text(encoding="utf-8"), args.backend, session=args.session)
    except KeyError as e:
        raise UsageError(str(e).strip("'\"")) from None
    print(json.dumps(result.to_json()) if args.json else verdict_text(result))
    return 0 if result.passed else 1


def cmd_walkthrough(args) -> int:
    from tutor.coach.tasks import load_task
    from tutor.coach.walkthrough import load_walkthrough

    try:
        task = load_task(args.task)
    except KeyError:
        raise UsageError(f"no coaching task {args.task!r}; the tasks are: {_task_names()}") from None
    walk = load_walkthrough(task)
    if walk is None:
        with_one = [t.name for t in _tasks_with_walkthroughs()]
        raise UsageError(f"{args.task} has no walkthrough yet; these have one: {', '.join(with_one) or 'none'}")
    print(walk.text(diffs=args.diffs), end="")
    for problem in walk.problems:
        print(problem, file=sys.stderr)
    return 0


def _tasks_with_walkthroughs() -> list:
    from tutor.coach.tasks import coaching_tasks
    from tutor.coach.walkthrough import STEPS_FILE

    return [t for t in coaching_tasks() if (t.folder / STEPS_FILE).is_file()]


def cmd_optimise(args) -> int:
    from tutor.coach import optimise as opt
    from tutor.durations import clock_text

    if args.replay:
        path = Path(args.replay)
        if not path.is_file():
            raise UsageError(f"no such log: {args.replay}")
        start, attempts = opt.read_log(path)
        print(terminal_safe(f"{path}: {start.get('target') if start else '?'} on "
                            f"{start.get('backend') if start else '?'}, model {start.get('model') if start else '?'}"))
        for a in attempts:
            print(terminal_safe(a.summary_line()))
        return 0
    if not args.target or not args.file:
        raise UsageError(f"give a TARGET (a coaching task: {_task_names()}; or a solved puzzle) and the FILE to "
                         "start from, or --replay LOG")
    from tutor.ai.config import settings_for
    from ..engine.runner import default_backend
    from tutor.store import default_root

    settings = _optimise_settings(args, settings_for(args))
    backend = args.backend or default_backend(args.session)
    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {args.file}")
    source = path.read_text(encoding="utf-8")
    target = _optimise_target(args.target, source, backend)
    reason = settings.unavailable()
    if reason:
        print(f"gpu-tutor optimise: {reason}.", file=sys.stderr)
        _worked_answer(target, settings)
        if hasattr(target, "close"):
            target.close()
        return 2
    budget = _optimise_budget(args, settings)
    resume = None
    if args.resume:
        log_path = Path(args.resume)
        if not log_path.is_file():
            raise UsageError(f"no such log to resume: {args.resume}")
        _, resume = opt.read_log(log_path)
    else:
        log_path = Path(args.log) if args.log else opt.log_path_for(target.name, default_root())
    quiet = args.json

    def on_event(kind, data):
        if quiet:
            return
        if kind == "round":
            left = budget.wall_s - (time.monotonic() - started)
            print(f"round {data}: asking {settings.model} ... ({clock_text(left)} of "
                  f"{clock_text(budget.wall_s)} wall time left)", file=sys.stderr, flush=True)
        elif kind == "attempt":
            print(terminal_safe(data.summary_line()), flush=True)

    started = time.monotonic()
    try:
        result = opt.optimise(target, source, settings, budget, log_path=log_path, resume=resume, on_event=on_event)
    finally:
        if hasattr(target, "close"):
            target.close()
    if result.stop_reason == "time" and not quiet:
        print(opt.wall_time_spent_text(budget.wall_s, "with --budget {more}"), file=sys.stderr)
    saved = None
    if result.best is not None:
        saved = opt.save_new(Path(args.out) if args.out else path.with_name(f"{path.stem}.optimised.py"),
                             result.best.code)
    if args.json:
        out = result.to_json()
        out["diff"], out["saved_to"], out["log"] = result.diff(), str(saved) if saved else None, str(log_path)
        print(json.dumps(out))
        return 0 if result.best else 1
    for line in result.summary_lines(log_path):
        print(terminal_safe(line))
    if result.best is None:
        return 1
    b = result.best
    print(terminal_safe(result.diff()))  # the model's code
    if b.explanation:
        print(f"{opt.EXPLANATION_HEADING}:")
        print(terminal_safe(b.explanation))
    print(f"saved to {saved} (your file is unchanged)")
    return 0


def _optimise_settings(args, settings):
    """The flags --request-timeout and --reply-tokens over the [ai] settings' optimise_* keys."""
    import dataclasses

    from tutor.durations import parse_duration

    changes = {}
    if args.request_timeout is not None:
        try:
            changes["optimise_timeout"] = parse_duration(args.request_timeout)
        except ValueError as e:
            raise UsageError(f"--request-timeout: {e}") from None
        if changes["optimise_timeout"] <= 0:
            raise UsageError("--request-timeout must be more than 0 (e.g. --request-timeout 30m)")
    if args.reply_tokens is not None:
        if args.reply_tokens < 1:
            raise UsageError(f"--reply-tokens must be at least 1, not {args.reply_tokens}")
        changes["optimise_reply_tokens"] = args.reply_tokens
    return dataclasses.replace(settings, **changes) if changes else settings


def _optimise_budget(args, settings):
    """The flags, else the [ai] settings' defaults, else the optimiser's own."""
    from tutor.coach import optimise as opt
    from tutor.durations import parse_duration

    if args.budget is not None:
        try:
            wall_s = parse_duration(args.budget)
        except ValueError as e:
            raise UsageError(f"--budget: {e}") from None
        if wall_s <= 0:
            raise UsageError("--budget must be more than 0 (e.g. --budget 30m)")
    else:
        wall_s = settings.optimise_wall_s or opt.Budget.wall_s
    rounds = args.rounds if args.rounds is not None else settings.optimise_rounds or opt.Budget.rounds
    if rounds < 1:
        raise UsageError(f"--rounds must be at least 1, not {rounds}")
    return opt.Budget(rounds=rounds, wall_s=wall_s, tokens=args.max_total_tokens, cost_usd=args.max_cost,
                      target=args.target_score, samples=max(1, args.samples))


def _task_names() -> str:
    from tutor.coach.tasks import coaching_tasks

    return ", ".join(t.name for t in coaching_tasks())


def _optimise_target(name: str, source: str, backend: str):
    from tutor.coach import optimise as opt
    from tutor.coach.tasks import load_task

    try:
        load_task(name)
        return opt.TaskTarget(name, backend)
    except KeyError:
        pass
    try:
        puzzle = load_catalog().get(name)
    except KeyError:
        raise UsageError(f"unknown target '{name}': neither a coaching task ({_task_names()}) nor a puzzle "
                         "(see `gpu-tutor list`)") from None
    target = opt.PuzzleTarget(puzzle, source, backend)
    if not target.check_start().passed:  # in the target's own child: its kernel time is the baseline
        target.close()
        raise UsageError(f"{name}: your kernel does not pass yet; optimise a solved puzzle "
                         f"(`gpu-tutor check {name} FILE` first)")
    return target


def _worked_answer(target, settings) -> None:
    from tutor.coach.optimise import worked_answer

    answer = worked_answer(target, settings)
    if answer is None:
        print("Configure a model (`gpu-tutor doctor`) to run the optimiser.", file=sys.stderr)
        return
    print(answer.notice() + "\n")
    print(answer.reference)
    if answer.walkthrough:
        print(f"\nHow an expert gets there, a change at a time: gpu-tutor walkthrough {target.name}")
