"""`gpu-tutor`: the app by default, and headless subcommands for scripts, CI and workshops.

Exit status everywhere: 0 passed (or done), 1 failed, 2 a usage or input error (unknown puzzle,
missing file), always with one line that says what to do. Nothing here imports numba: the engine's
child process does, so `gpu-tutor list` answers at once.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from .ai.config import ConfigError
from .engine.gpulock import waiting_text
from .engine.runner import BACKENDS, DEFAULT_TIMEOUT, Runner, RunnerError, default_backend
from .puzzles import ContentError, load_catalog
from .textsafe import terminal_safe
from .workshop.cli import add_commands as add_workshop_commands
from .workshop.cli import add_workshop_option, home_workshop


class UsageError(Exception):
    pass


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command is None:
            return cmd_home(args)
        return args.func(args)
    except (UsageError, ContentError, RunnerError, ConfigError) as e:
        print(f"gpu-tutor: {terminal_safe(str(e))}", file=sys.stderr)  # may quote a file's text
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `gpu-tutor list | head`: the reader left; say nothing more
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpu-tutor", description="Learn GPU programming by solving Numba-CUDA puzzles. With no "
        "command, the app opens (in a terminal) on the puzzle you worked on last.")
    parser.add_argument("--backend", dest="app_backend", choices=("sim", "gpu"), default=None,
                        help="where the app runs kernels (default: gpu when one is present, else sim)")
    parser.add_argument("--puzzle", dest="app_puzzle", default=None, help="open the app on this puzzle")
    _ai_options(parser, default=None)
    add_workshop_option(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("list", help="list the puzzles, track by track")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="print a puzzle's lesson and starter file")
    p.add_argument("puzzle")
    p.add_argument("--starter", action="store_true", help="print only the starter file (to save it)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("check", help="check a kernel file against a puzzle")
    _run_options(p)
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("trace", help="a text picture of every thread's reads and writes, phase by phase")
    _run_options(p, backends=("sim",))
    p.add_argument("--config", type=int, default=0, help="which config to draw (0 = the first)")
    p.set_defaults(func=cmd_trace)

    p = sub.add_parser("verify", help="verify a candidate kernel module against a coaching task")
    p.add_argument("task", help="a task under kernels/ (e.g. reduce_sum)")
    p.add_argument("file", help="the candidate module (kernels and launch(out, *inputs))")
    p.add_argument("--backend", choices=("sim", "gpu", "numba-sim"), default="sim")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("hint", help="a hint for your kernel, streamed (AI when a model is configured, else authored)")
    p.add_argument("puzzle", help="the puzzle id (see `gpu-tutor list`)")
    p.add_argument("file", help="your kernel file")
    p.add_argument("--level", type=int, choices=(1, 2, 3, 4), default=1,
                   help="1 a nudge, 2 the idea, 3 near-pseudocode, 4 full code (policy permitting, with --again)")
    p.add_argument("--again", action="store_true", help="with --level 4: yes, I asked before and want the full code")
    _ai_options(p)
    p.set_defaults(func=cmd_hint)

    p = sub.add_parser("doctor", help="what AI model is configured, and one tiny request to see that it answers")
    _ai_options(p)
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("config", help="where the settings file is and what it says; --init writes an example")
    p.add_argument("--init", action="store_true", help="write a commented example settings file (never overwrites)")
    p.add_argument("--check", action="store_true", help="the same as `gpu-tutor doctor`")
    _ai_options(p)
    p.set_defaults(func=cmd_config)

    p = sub.add_parser("optimise", aliases=["optimize"], help="the AI coach: a model proposes faster kernels, "
                       "the verifier judges each, the judgement goes back, within your budget")
    p.add_argument("target", nargs="?", help="a coaching task under kernels/ (e.g. softmax) or a solved puzzle id")
    p.add_argument("file", nargs="?", help="the kernel to start from (yours, or the task's naive.py)")
    p.add_argument("--budget", default=None, metavar="TIME",
                   help="the wall-clock time for the whole session, model replies and verification included: "
                        "15m, 90s, 1h (default: optimise_wall_time in the [ai] settings, else 15m); a round "
                        "that has begun runs to its end")
    p.add_argument("--rounds", type=int, default=None,
                   help="at most this many rounds (default: optimise_rounds in the [ai] settings, else 10)")
    p.add_argument("--target", dest="target_score", type=float, default=None,
                   help="stop once a verified candidate reaches this score (e.g. 2.0)")
    p.add_argument("--samples", type=int, default=1, help="candidates asked for per round (default 1)")
    p.add_argument("--max-tokens", dest="max_total_tokens", type=int, default=None, help="stop after this many tokens")
    p.add_argument("--max-cost", dest="max_cost", type=float, default=None, help="stop after this many US dollars")
    p.add_argument("--backend", choices=("sim", "gpu"), default=None,
                   help="where candidates are judged (default: gpu when one is present, else sim)")
    p.add_argument("--log", default=None, help="the JSONL log (default: a new file in the data folder)")
    p.add_argument("--resume", default=None, help="continue the session in this log")
    p.add_argument("--replay", default=None, help="print the rounds of a log and stop (no model needed)")
    p.add_argument("--out", default=None, help="where to save the best candidate (never overwrites)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    _ai_options(p)
    p.set_defaults(func=cmd_optimise)

    add_workshop_commands(sub)  # workshop init|check, export, report

    p = sub.add_parser("content", help="content tools: `gpu-tutor content check`")
    csub = p.add_subparsers(dest="content_command", metavar="ACTION")
    cc = csub.add_parser("check", help="validate every puzzle (references pass, starters fail, hints leak nothing)")
    cc.add_argument("--backend", choices=("sim", "gpu", "numba-sim"), default="sim")
    cc.add_argument("--seed", type=int, default=None)
    cc.add_argument("puzzles", nargs="*", help="only these puzzles")
    cc.set_defaults(func=cmd_content_check)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])
    return parser


def _ai_options(p, default=argparse.SUPPRESS):
    """--model, --api-base and --offline, before or after the subcommand."""
    p.add_argument("--model", default=default, help="a litellm model string, e.g. openai/gpt-4o-mini or "
                   "ollama_chat/llama3 (overrides the config file)")
    p.add_argument("--api-base", dest="api_base", default=default, help="the model server's URL, e.g. "
                   "http://127.0.0.1:8080/v1")
    p.add_argument("--offline", action="store_true", default=default if default is not None else False,
                   help="no network, except to a local --api-base; litellm is not even imported")


def _run_options(p, backends=BACKENDS):
    p.add_argument("puzzle", help="the puzzle id (see `gpu-tutor list`)")
    p.add_argument("file", help="your kernel file")
    p.add_argument("--backend", choices=backends, default=None,
                   help="sim (our tracing simulator), gpu (a CUDA GPU), numba-sim (Numba's simulator); "
                        "default: gpu when one is present, else sim")
    p.add_argument("--seed", type=int, default=None, help="seed for the random configs (to repeat a run)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds before a run is stopped")


# -- commands ---------------------------------------------------------------------------------------
def cmd_home(args) -> int:
    if sys.stdin.isatty() and sys.stdout.isatty():
        from .app.app import make_app

        if args.app_puzzle:
            _puzzle(args.app_puzzle)
        from .ai.config import settings_for

        workshop = home_workshop(args)  # a bad workshop file is reported before the app opens
        # A workshop's file decides the hints; otherwise a bad settings file is reported here too.
        settings = workshop.ai_settings() if workshop else settings_for(args)
        make_app(backend=args.app_backend, puzzle=args.app_puzzle, ai_settings=settings, workshop=workshop).run()
        return 0
    return cmd_orientation(args)


def cmd_orientation(args) -> int:
    """Without a terminal (a pipe, CI) the app cannot open: say where to start instead."""
    catalog = load_catalog()
    first = catalog.ordered()[0]
    print("gpu-tutor: learn GPU programming by solving Numba-CUDA puzzles.")
    print(f"backend: {default_backend()} ({'a CUDA GPU was found' if default_backend() == 'gpu' else 'no GPU here: our simulator'})")
    print()
    print(_list_text(catalog, _progress_store()))
    print()
    print("Start with:")
    print(f"  gpu-tutor show {first.id}                      # read the lesson")
    print(f"  gpu-tutor show {first.id} --starter > {first.id}.py   # save the starter, then edit it")
    print(f"  gpu-tutor check {first.id} {first.id}.py             # run it on every config")
    print(f"  gpu-tutor trace {first.id} {first.id}.py             # see what every thread did")
    return 0


def cmd_list(args) -> int:
    catalog = load_catalog()
    store = _progress_store()
    if args.json:
        print(json.dumps({"tracks": [
            {"id": t.id, "title": t.title, "description": t.description,
             "solved": store.solved_count(t.puzzles) if store else 0,
             "puzzles": [{"id": p.id, "title": p.title, "summary": p.summary, "signature": p.signature,
                          "constants": p.constants, "budget": p.budget, **_progress_fields(store, p.id)}
                         for p in (catalog.puzzles[i] for i in t.puzzles)]}
            for t in catalog.tracks]}))
        return 0
    print(_list_text(catalog, store))
    return 0


def _progress_store():
    """The learner's progress, read as the app reads it ($GPU_TUTOR_DATA, else the platform's data
    folder); what could not be read is said on stderr, and the list still prints."""
    from .store import Store

    try:
        store = Store()
    except OSError as e:
        print(f"gpu-tutor: progress not shown: {terminal_safe(str(e))}", file=sys.stderr)
        return None
    for notice in store.notices:
        print(f"gpu-tutor: {terminal_safe(notice)}", file=sys.stderr)
    return store


def _progress_fields(store, puzzle_id: str) -> dict:
    progress = store.progress(puzzle_id) if store else None
    if progress is None:
        return {"status": "not started", "progress": None}
    return {"status": _status(progress), "progress": progress.to_json()}


def _status(progress) -> str:
    if progress.solved:
        return "solved"
    return "attempted" if progress.attempts else "not started"


def _list_text(catalog, store=None) -> str:
    """Track by track, each puzzle with the learner's state: solved, tried (run, not passed yet),
    or blank when not started."""
    lines = []
    n = 0
    for track in catalog.tracks:
        solved = f" ({store.solved_count(track.puzzles)} of {len(track.puzzles)} solved)" if store else ""
        lines.append(f"{track.title}{solved}")
        for pid in track.puzzles:
            n += 1
            p = catalog.puzzles[pid]
            if store:
                lines.append(f"  {n:2d}. {p.id:<20} {_STATE_TEXT[_status(store.progress(pid))]:<6}  {p.title}")
            else:
                lines.append(f"  {n:2d}. {p.id:<20} {p.title}")
    return "\n".join(lines)


_STATE_TEXT = {"solved": "solved", "attempted": "tried", "not started": ""}


def cmd_show(args) -> int:
    puzzle = _puzzle(args.puzzle)
    if args.starter:
        sys.stdout.write(puzzle.starter)
        return 0
    print(puzzle.lesson.rstrip())
    print()
    print("-" * 72)
    print(f"starter file (save it with: gpu-tutor show {puzzle.id} --starter > {puzzle.id}.py)")
    print("-" * 72)
    print(puzzle.starter.rstrip())
    return 0


def cmd_check(args) -> int:
    puzzle, source, filename = _inputs(args)
    backend = args.backend or default_backend()
    with Runner(backend, timeout=args.timeout) as runner:
        result = runner.check(puzzle.id, source, filename, seed=args.seed, keep_traces=False,
                              on_wait=lambda n: print(waiting_text(n), file=sys.stderr, flush=True))
    verdict = result.verdict
    if args.json:
        print(json.dumps(verdict.to_json()))
    else:
        from .engine.textview import verdict_text

        print(verdict_text(verdict, color=sys.stdout.isatty()))
    return 0 if verdict.passed else 1


def cmd_trace(args) -> int:
    puzzle, source, filename = _inputs(args)
    with Runner("sim", timeout=args.timeout) as runner:
        result = runner.check(puzzle.id, source, filename, seed=args.seed, keep_traces=True)
    from .engine.textview import trace_text, verdict_text

    runs = result.runs
    if not runs:
        print(verdict_text(result.verdict))
        return 1
    if not 0 <= args.config < len(runs):
        raise UsageError(f"--config must be between 0 and {len(runs) - 1} (this run had {len(runs)} configs)")
    run = runs[args.config]
    print(f"config {args.config}: {run.config.name}")
    if run.trace is not None:
        print(trace_text(run.trace, width=_terminal_width()))
    print()
    print(verdict_text(result.verdict))
    return 0 if result.verdict.passed else 1


def _terminal_width() -> int:
    """The terminal's width for wrapped text; 80 when stdout is not a terminal (a pipe, a file)."""
    if not sys.stdout.isatty():
        return 80
    import shutil

    return shutil.get_terminal_size((80, 24)).columns


def cmd_verify(args) -> int:
    from .coach.verify import verify
    from .engine.textview import verdict_text

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {args.file}")
    try:
        result = verify(args.task, path.read_text(encoding="utf-8"), args.backend)
    except KeyError as e:
        raise UsageError(str(e).strip("'\"")) from None
    print(json.dumps(result.to_json()) if args.json else verdict_text(result))
    return 0 if result.passed else 1


def cmd_hint(args) -> int:
    from .ai.config import settings_for

    puzzle, source, filename = _inputs(args)
    settings = settings_for(args)
    if args.level == 4 and not args.again:
        raise UsageError("--level 4 asks for the full code: ask again with --level 4 --again if you are sure")
    with Runner("sim") as runner:  # one child: the learner's check, then the leak guard's
        return _hint_with(runner, args, puzzle, source, filename, settings)


def _hint_with(runner, args, puzzle, source, filename, settings) -> int:
    from .ai.hints import HintLog, SimChecker, ask_hint, authored_hint, failure_context, level_name
    from .store import default_root

    result = runner.check(puzzle.id, source, filename, keep_traces=True, compile=False)
    if result.verdict.passed:
        print(f"{puzzle.id}: your kernel already passes every config; no hint needed.")
        return 0
    shown = [h for h in (authored_hint(puzzle, n) for n in range(1, min(args.level, 4))) if h]
    reason = settings.unavailable()
    if reason is None:
        print(f"Hint {args.level} ({level_name(args.level)}) from {settings.model}:", file=sys.stderr)
    streamed = []
    progress = sys.stderr.isatty()

    def on_text(text):  # the whole reply, once the leak guard passed it; the model's words are shown, never obeyed
        streamed.append(text)
        sys.stdout.write(terminal_safe(text))
        sys.stdout.flush()

    def on_progress(received):  # nothing of a reply shows before the guard has judged it whole
        if progress:
            sys.stderr.write(f"\r  receiving the hint ({received} characters), checked before it is shown ...")
            sys.stderr.flush()

    def on_status(text):
        if progress:
            sys.stderr.write("\n")
        sys.stderr.write(f"[{terminal_safe(text)}]\n")
        sys.stderr.flush()

    with SimChecker(puzzle.id, runner=runner) as passes:
        outcome = ask_hint(puzzle, args.level, source, failure_context(result), shown, settings, passes=passes,
                           on_text=on_text, on_status=on_status, on_progress=on_progress,
                           log=HintLog(default_root() / "ai-hints.jsonl"))
    if progress and reason is None:
        sys.stderr.write("\n")
    if outcome.source == "ai":
        print()
        print(f"[{outcome.usage.text()}]", file=sys.stderr)
    else:
        if streamed:
            print()
        if outcome.note:
            print(terminal_safe(outcome.note), file=sys.stderr)
        print(f"Hint {min(args.level, 3)} ({level_name(min(args.level, 3))}): {terminal_safe(outcome.text)}")
    return 0


def cmd_doctor(args) -> int:
    from .ai.config import config_path, settings_for
    from .ai.llm import AIError, complete

    settings = settings_for(args)
    path = config_path()
    print(f"settings file: {path} ({'found' if path.is_file() else 'not there: defaults'})")
    print(f"model:    {settings.model or '(none)'}")
    print(f"api_base: {settings.api_base or '(the provider default)'}"
          + (" (local)" if settings.local_endpoint else ""))
    print(f"offline:  {'yes' if settings.offline else 'no'}")
    print(f"full-code hints: {'allowed' if settings.full_code_hints else 'not allowed'}")
    known = [v for v in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY",
                         "GROQ_API_KEY", "OPENROUTER_API_KEY", "HOSTED_VLLM_API_KEY") if os.environ.get(v)]
    if settings.api_key_env:
        state = "set" if os.environ.get(settings.api_key_env) else "NOT set"
        print(f"key:      from ${settings.api_key_env} ({state})")
    else:
        print(f"keys in the environment: {', '.join(known) if known else 'none of the usual variables'}")
    reason = settings.unavailable()
    if reason:
        print(f"AI hints: off: {reason}. Authored hints work without a model.")
        return 1
    print("asking for one word ...", flush=True)
    messages = [{"role": "user", "content": "Reply with the single word: ready"}]
    try:
        stream = complete(settings, messages, max_tokens=8)
    except AIError as e:
        print(f"FAILED ({e.kind}): {terminal_safe(e.message)}")
        return 1
    print(terminal_safe(f"OK: {settings.model} answered {stream.text.strip()[:40]!r} ({stream.usage.text()})"))
    return 0


def cmd_config(args) -> int:
    from .ai.config import EXAMPLE, config_path, load_settings

    if args.check:
        return cmd_doctor(args)
    path = config_path()
    if args.init:
        if path.exists():
            raise UsageError(f"{path} exists; edit it, or remove it first")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(EXAMPLE, encoding="utf-8")
        print(f"wrote {path}")
        return 0
    settings = load_settings()
    print(f"settings file: {path} ({'found' if path.is_file() else 'not there'})")
    print(f"model = {settings.model!r}, api_base = {settings.api_base!r}, offline = {settings.offline}, "
          f"full_code_hints = {settings.full_code_hints}")
    return 0


def cmd_optimise(args) -> int:
    from .coach import optimise as opt
    from .durations import clock_text

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
    from .ai.config import settings_for
    from .engine.runner import default_backend
    from .store import default_root

    settings = settings_for(args)
    backend = args.backend or default_backend()
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


def _optimise_budget(args, settings):
    """The flags, else the [ai] settings' defaults, else the optimiser's own."""
    from .coach import optimise as opt
    from .durations import parse_duration

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
    from .coach.tasks import coaching_tasks

    return ", ".join(t.name for t in coaching_tasks())


def _optimise_target(name: str, source: str, backend: str):
    from .coach import optimise as opt
    from .coach.tasks import load_task

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
    from .coach.optimise import worked_answer

    answer = worked_answer(target, settings)
    if answer is None:
        print("Configure a model (`gpu-tutor doctor`) to run the optimiser.", file=sys.stderr)
        return
    print(answer.notice() + "\n")
    print(answer.reference)


def cmd_content_check(args) -> int:
    from .content_check import run_content_check

    return run_content_check(args.backend, args.puzzles, seed=args.seed)


# -- helpers ----------------------------------------------------------------------------------------
def _puzzle(pid: str):
    catalog = load_catalog()
    try:
        return catalog.get(pid)
    except KeyError as e:
        raise UsageError(str(e).strip("'\"") + " (see `gpu-tutor list`)") from None


def _inputs(args):
    puzzle = _puzzle(args.puzzle)
    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {args.file} (save the starter with `gpu-tutor show {puzzle.id} "
                         f"--starter > {puzzle.id}.py`)")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {args.file}: {e}") from None
    return puzzle, source, os.fspath(path)


if __name__ == "__main__":
    sys.exit(main())
