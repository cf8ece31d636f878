"""The facilitator's commands: `workshop init|check`, `export`, `report` and `room`, and the workshop
the app opens with. Kept apart from the tutor/cli/ package so that the learner's commands there stay short;
tutor/cli/__init__.py only registers these. Exit status as everywhere: 0 done, 1 failed, 2 a usage or
input error.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from tutor.puzzles import load_catalog
from tutor.textsafe import terminal_safe
from .config import EXAMPLE, WORKSHOP_ENV, Workshop, WorkshopError, load_workshop, workshop_path


def add_workshop_option(parser: argparse.ArgumentParser, default=None) -> None:
    parser.add_argument("--workshop", metavar="FILE", default=default,
                        help=f"a workshop file (TOML) that sets the puzzles, policies and backend; "
                             f"${WORKSHOP_ENV} does the same (`gpu-tutor workshop init` writes an example)")


def add_commands(sub) -> None:
    p = sub.add_parser("workshop", help="for facilitators: `workshop init` writes an example file, "
                                        "`workshop check FILE` validates one")
    wsub = p.add_subparsers(dest="workshop_command", metavar="ACTION")
    w = wsub.add_parser("init", help="write a commented example workshop file (never overwrites)")
    w.add_argument("file", nargs="?", default="workshop.toml", help="where to write it (default: workshop.toml)")
    w.set_defaults(func=cmd_workshop_init)
    w = wsub.add_parser("check", help="validate a workshop file and say what learners will see")
    w.add_argument("file")
    w.set_defaults(func=cmd_workshop_check)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])

    p = sub.add_parser("export", help="write your progress to one JSON file for your facilitator")
    p.add_argument("--out", metavar="FILE", default=None,
                   help="where to write it ('-' for standard output; default: gpu-tutor-progress-NAME.json)")
    p.add_argument("--with-code", action="store_true", help="include your code for each puzzle")
    p.add_argument("--name", default=None, help="put this name on the export (and keep it for next time)")
    add_workshop_option(p, default=argparse.SUPPRESS)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("report", help="for facilitators: a class table, the room's misconceptions and two plots "
                                      "from learners' export files or data folders; CSVs, and an HTML page")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="export files, or folders: a served room's (its --data), a learner's data folder, a folder "
                        "of exports (bad ones are named and skipped; folders are only read)")
    p.add_argument("--csv", metavar="FILE", default="class-progress.csv",
                   help="where to write the CSV, one row per learner and puzzle (default: class-progress.csv); "
                        "beside it NAME-misconceptions.csv and NAME-over-time.csv")
    p.add_argument("--html", metavar="FILE", default=None,
                   help="also write the whole report as one HTML page (no scripts, nothing fetched)")
    p.add_argument("--seats", action="store_true",
                   help="seat numbers in place of learners' names, in every output (for a projector, or to pass on)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("room", help="for facilitators: the room, live: who is on which puzzle and stuck how long, "
                                    "the mistakes learners share, hint use, who has gone quiet, and a message to "
                                    "every learner's screen")
    p.add_argument("folder", metavar="DIR",
                   help="a served room's folder (its `gpu-tutor serve --data`), a folder of export files, or one "
                        "learner's data folder; only read, never written (but for the room's message file)")
    p.add_argument("--seats", action="store_true",
                   help="show seat numbers instead of learners' names (for a screen the room can see)")
    p.set_defaults(func=cmd_room)


def active_workshop(args) -> Workshop | None:
    """The workshop named by --workshop or $GPU_TUTOR_WORKSHOP, validated; None without one."""
    path = workshop_path(getattr(args, "workshop", None))
    return None if path is None else load_workshop(path, load_catalog(on_demand=True))


def home_workshop(args) -> Workshop | None:
    """The workshop the app opens with, checked against the other options before the app opens. It
    also names the GPU queue folder and its turns (use_gpu_queue)."""
    workshop = active_workshop(args)
    if workshop is None:
        return None
    clashing = [flag for flag, value in (("--model", args.model), ("--api-base", args.api_base)) if value]
    if clashing:
        raise WorkshopError(f"{workshop.path}: {' and '.join(clashing)} cannot be used in a workshop: its file "
                            "decides the hints (hints = \"authored\" or \"ai\" with an [ai] table)")
    if args.app_puzzle and args.app_puzzle not in workshop.puzzles:
        raise WorkshopError(f"{workshop.path}: --puzzle {args.app_puzzle} is not in this workshop; "
                            f"allowed: {', '.join(workshop.puzzles)}")
    use_gpu_queue(workshop)
    if hasattr(args, "session"):  # the CLI's session, read again now that the workshop named its GPU queue
        from ..session import Session

        args.session = Session.from_environment()
    return workshop


def use_gpu_queue(workshop: Workshop, environ=os.environ) -> None:
    """The workshop's GPU queue folder and turns, for this process and the runners it starts (the
    environment, where it names them, wins, as the facilitator may set it for every session).
    `workshop check` passes a copy of the environment, to say what a learner's process will count."""
    from ..engine.process.gpulock import QUEUE_ENV, TURNS_ENV

    if workshop.gpu_queue:
        environ.setdefault(QUEUE_ENV, str(Path(workshop.gpu_queue).expanduser()))
    if workshop.gpu_turns is not None:
        environ.setdefault(TURNS_ENV, str(workshop.gpu_turns))


# -- commands ---------------------------------------------------------------------------------------
def cmd_workshop_init(args) -> int:
    path = Path(args.file)
    if path.exists():
        raise WorkshopError(f"{path}: exists; edit it, or choose another name (gpu-tutor workshop init OTHER.toml)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(EXAMPLE, encoding="utf-8")
    print(f"wrote {path}: edit it, then check it with `gpu-tutor workshop check {path}`")
    return 0


def cmd_workshop_check(args) -> int:
    workshop = load_workshop(Path(args.file), load_catalog(on_demand=True))
    catalog = workshop.restrict(load_catalog(on_demand=True))
    say = _safe_print  # every value here comes from the file
    say(f"{workshop.path}: OK")
    say(f"title:     {workshop.title}")
    say(f"puzzles:   {len(workshop.puzzles)}")
    width = max(len(p.id) for p in catalog.ordered())  # ids line up, however long
    for n, p in enumerate(catalog.ordered(), 1):
        say(f"  {n:2d}. {p.id:<{width}} {p.title}")
    say(f"solutions: {workshop.solutions}")
    hints = "authored only (no network)" if workshop.hints == "authored" else \
        f"AI: {workshop.ai['model']} at {workshop.ai['api_base']} (offline otherwise)"
    say(f"hints:     {hints}")
    say(f"backend:   {workshop.backend}")
    say(f"name:      {'asked once per learner' if workshop.ask_name else 'not asked (exports carry an id)'}")
    say("code:      " + ("the facilitator may read learners' code in `gpu-tutor room` (facilitator_sees_code)"
                         if workshop.facilitator_sees_code else
                         "learners' own; `gpu-tutor room` shows none (facilitator_sees_code = true allows it)"))
    from ..engine.process.gpulock import QUEUE_ENV, shared_queue

    if workshop.gpu_queue:
        say(f"GPU queue: {Path(workshop.gpu_queue).expanduser()}")
    else:
        queue = shared_queue(1, os.environ.get(QUEUE_ENV))  # only its folder here; the turns have their own line
        say(f"GPU queue: {queue.folder if queue else 'off'}")
    say(f"GPU turns: {_turns_text(workshop)}")
    return 0


def _turns_text(workshop: Workshop) -> str:
    """What every learner's process will count: the environment home_workshop leaves, as the queue
    reads it."""
    from ..engine.process.gpulock import TURNS_ENV, turns_from_env

    named = os.environ.get(TURNS_ENV, "").strip()
    environ = dict(os.environ)
    use_gpu_queue(workshop, environ)
    turns, notice = turns_from_env(environ)
    text = "one run at a time" if turns == 1 else f"up to {turns} runs at once"
    if not named and workshop.gpu_turns is None:
        return f"{text} (the default; gpu_turns sets it)"
    if notice:
        return f"{text} ({notice})"
    if named and workshop.gpu_turns is not None and workshop.gpu_turns != turns:
        return f"{text} ({TURNS_ENV}={named} in this environment wins over gpu_turns = {workshop.gpu_turns})"
    return text


def cmd_export(args) -> int:
    from tutor.store import Store
    from .export import build_export, export_puzzle_ids, write_export
    from .learner import load_learner, save_name

    workshop = active_workshop(args)
    store = Store()
    if args.name is not None:
        try:
            learner = save_name(store.root, args.name)
        except ValueError as e:
            raise WorkshopError(f"--name: {e}") from None
    else:
        learner = load_learner(store.root)
    catalog = load_catalog(on_demand=True)
    left_out: list[str] = []
    data = build_export(store, learner, export_puzzle_ids(store, catalog, workshop), workshop=workshop,
                        with_code=args.with_code, notes=left_out)
    if args.out == "-":
        import json

        print(json.dumps(data, indent=2))
        return 0
    out = Path(args.out or f"gpu-tutor-progress-{_slug(learner.label)}.json")
    try:
        write_export(out, data)
    except OSError as e:
        raise WorkshopError(f"{out}: cannot be written ({e.strerror or e}); choose another place with --out") from None
    solved = sum(1 for p in data["puzzles"] if p["solved"])
    _safe_print(f"wrote {out}: {learner.label}, {solved} of {len(data['puzzles'])} puzzles solved"
                + (", with your code" if args.with_code else ""))
    for notice in store.notices + left_out:
        _safe_print(f"note: {notice}", file=sys.stderr)
    return 0


def cmd_report(args) -> int:
    from .report import beside, load_class, misconceptions_csv, over_time_csv, report_csv, report_text

    report = load_class([Path(f) for f in args.files], seats=args.seats)
    for path, why in report.skipped:
        _safe_print(f"gpu-tutor: skipped {path}: {why}", file=sys.stderr)
    for note in report.notes:
        _safe_print(f"gpu-tutor: note: {note}", file=sys.stderr)
    if not report.learners:
        print(f"gpu-tutor: none of the {len(args.files)} file(s) or folder(s) could be read; nothing to report",
              file=sys.stderr)
        return 1
    _safe_print(report_text(report))
    out = Path(args.csv)
    series = report.over_time()
    written = [
        (out, report_csv(report), f"{len(report.learners)} learner(s) x {len(report.puzzles)} puzzle(s)"),
        (beside(out, "misconceptions"), misconceptions_csv(report),
         f"{len(report.misconceptions())} misconception(s)"),
        (beside(out, "over-time"), over_time_csv(report),
         f"puzzles solved every {series.step_text()}" if series else "no solve with a time yet"),
    ]
    print()
    for path, text, what in written:
        _write(path, text, "--csv")
        _safe_print(f"wrote {path} ({what})")
    if args.html:
        from .report_html import report_html

        _write(Path(args.html), report_html(report), "--html")
        _safe_print(f"wrote {args.html} (the report as one page, for a browser)")
    return 0


def _write(path: Path, text: str, option: str) -> None:
    try:
        # errors=: a lone surrogate (valid JSON, not text) in a name is written as \udc80, not a crash
        path.write_text(text, encoding="utf-8", errors="backslashreplace")
    except OSError as e:
        raise WorkshopError(f"{path}: cannot be written ({e.strerror or e}); choose another place with {option}") \
            from None


def cmd_room(args) -> int:
    path = Path(args.folder).expanduser()
    refusal = _not_a_room(path)
    if refusal:
        _safe_print(f"gpu-tutor room: {path}: {refusal}", file=sys.stderr)
        return 2
    from tutor.app.room_app import RoomViewApp  # the one command here with a screen: textual loads only now

    RoomViewApp(path, seat_numbers=args.seats).run()
    return 0


def _not_a_room(path: Path) -> str | None:
    """Why `path` is no room to watch, or None. A served room with no learner yet is one: they come."""
    from .learner import FILE_NAME

    if not path.exists():
        return "no such folder; give the folder of a served room (its --data) or a folder of export files"
    if not path.is_dir():
        return ("is a file; `gpu-tutor room` watches a folder: a served room's (its --data) or one holding export "
                "files (`gpu-tutor report FILE...` reads single files)")
    try:
        if (path / "learners").is_dir() or (path / "state.json").exists() or (path / FILE_NAME).exists() \
                or any(path.glob("*.json")):
            return None
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    return ("holds no room: no learners/ folder (a served room's), no export files (*.json) and no learner's progress; "
            "give the folder `gpu-tutor serve --data` names, or one you copied learners' exports into")


def _safe_print(text: str, file=None) -> None:
    """Names, titles, ids and paths from files other people wrote: shown, never obeyed by the terminal."""
    print(terminal_safe(text), file=file)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "learner"
