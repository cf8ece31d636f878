"""The learner's puzzle commands: the home screen (the app, or where to start when there is no
terminal), `list` with the learner's progress, `show`, `check` and `trace`; and `content check`, the
author's check of the same catalog, a few lines that would not earn a module of their own.

They sit together because they share the catalog, the progress listing and a puzzle's kernel file.
Nothing here imports numba: the engine's child process does, so `gpu-tutor list` answers at once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..engine.process.gpulock import waiting_text
from ..engine.runner import Runner, default_backend, gpu_present
from tutor.puzzles import load_catalog
from tutor.textsafe import terminal_safe
from tutor.workshop.cli import home_workshop
from .inputs import UsageError, find_puzzle, read_inputs


def cmd_home(args) -> int:
    if sys.stdin.isatty() and sys.stdout.isatty():
        from tutor.app.app import make_app

        if args.app_puzzle:
            find_puzzle(args.app_puzzle)
        from tutor.ai.config import settings_for

        workshop = home_workshop(args)  # a bad workshop file is reported before the app opens
        # A workshop's file decides the hints; otherwise a bad settings file is reported here too.
        settings = workshop.ai_settings() if workshop else settings_for(args)
        make_app(backend=args.app_backend, puzzle=args.app_puzzle, ai_settings=settings, workshop=workshop,
                 session=args.session).run()
        return 0
    return cmd_orientation(args)


def cmd_orientation(args) -> int:
    """Without a terminal (a pipe, CI) the app cannot open: say where to start instead."""
    catalog = load_catalog()
    first = catalog.ordered()[0]
    print("gpu-tutor: learn GPU programming by solving Numba-CUDA puzzles.")
    print(f"backend: {default_backend(args.session)} ({'a CUDA GPU was found' if default_backend(args.session) == 'gpu' else 'no GPU here: our simulator'})")
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
    from tutor.store import Store

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
    width = max((len(pid) for track in catalog.tracks for pid in track.puzzles), default=0)  # ids line up
    for track in catalog.tracks:
        solved = f" ({store.solved_count(track.puzzles)} of {len(track.puzzles)} solved)" if store else ""
        lines.append(f"{track.title}{solved}")
        for pid in track.puzzles:
            n += 1
            p = catalog.puzzles[pid]
            if store:
                lines.append(f"  {n:2d}. {p.id:<{width}} {_STATE_TEXT[_status(store.progress(pid))]:<6}  {p.title}")
            else:
                lines.append(f"  {n:2d}. {p.id:<{width}} {p.title}")
    return "\n".join(lines)


_STATE_TEXT = {"solved": "solved", "attempted": "tried", "not started": ""}


def cmd_show(args) -> int:
    puzzle = find_puzzle(args.puzzle)
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
    puzzle, source, filename = read_inputs(args)
    backend = args.backend or default_backend(args.session)
    with Runner(backend, timeout=args.timeout, session=args.session) as runner:
        result = runner.check(puzzle.id, source, filename, seed=args.seed, keep_traces=False,
                              on_wait=lambda n: print(waiting_text(n), file=sys.stderr, flush=True))
    verdict = result.verdict
    if args.json:
        print(json.dumps(verdict.to_json()))
    else:
        from ..engine.views.textview import verdict_text

        print(verdict_text(verdict, color=sys.stdout.isatty()))
        if backend == "sim" and "unsupported" in verdict.kinds() and gpu_present(args.session):
            # the engine's words serve every mode; the flag is the command line's own
            print(terminal_safe(f"note: `gpu-tutor check {puzzle.id} {filename} --backend gpu` checks it on this "
                                "machine's GPU, where the real numba-cuda runs it."))
    return 0 if verdict.passed else 1


def cmd_profile(args) -> int:
    """Nsight Compute's memory counters for each config, from the simulator's trace."""
    from tutor.coach.tasks import _task_names, kernels_dir

    if args.puzzle in _task_names(kernels_dir()):
        return _profile_task(args)
    puzzle, source, filename = read_inputs(args)
    with Runner("sim", timeout=args.timeout, session=args.session) as runner:
        result = runner.check(puzzle.id, source, filename, seed=args.seed, keep_traces=True)
    from dataclasses import asdict

    from ..engine.analysis.counters import count, counters_text
    from ..engine.analysis.device_model import DEVICES, memory_bound, occupancy
    from ..engine.analysis.roofline import roofline

    device = DEVICES[args.device]
    runs = [(run, count(run.trace, source)) for run in result.runs if run.trace is not None]
    roofs = [roofline(c, device, puzzle.flops_for(run.config)) for run, c in runs]
    if args.json:
        print(json.dumps({"puzzle": puzzle.id, "passed": result.verdict.passed, "device": device.name,
                          "configs": [{"name": run.config.name, **c.to_json(),
                                       "occupancy": asdict(occupancy(run.trace, device)),
                                       "memory_bound": asdict(memory_bound(c, device)),
                                       "roofline": roof.to_json()} for (run, c), roof in zip(runs, roofs)]}))
        return 0 if runs else 1
    if not runs:
        print("The kernel made no traced launch, so there is nothing to count: "
              f"`gpu-tutor check {puzzle.id} {filename}` says why.")
        return 1
    if not result.verdict.passed:
        print("This kernel does not pass yet: these are the counters of what it did.\n")
    lines = source.splitlines()
    if args.line is not None:
        from ..engine.analysis.counters import line_detail

        run, _ = max(runs, key=lambda rc: sum(x.requests for x in rc[1].lines if x.line == args.line))
        detail = line_detail(run.trace, args.line, source)
        code = lines[args.line - 1].strip() if 0 < args.line <= len(lines) else ""
        print(terminal_safe(f"line {args.line} ({code}) in config {run.config.name}, its costliest request per "
                            "array:" if detail else f"line {args.line} makes no global or shared access here."))
        print(terminal_safe("\n".join(detail)))
        return 0
    print("\n\n".join(terminal_safe(counters_text(c, lines, f"{puzzle.title}, {run.config.name}:") + "\n  "
                                    + occupancy(run.trace, device).text(device) + ";\n  "
                                    + memory_bound(c, device).text(device) + ";\n  " + roof.line() + ".")
                        for (run, c), roof in zip(runs, roofs)))
    # One picture, of the launch that moves the most bytes: tiny configs are all ragged edges.
    n = max(range(len(runs)), key=lambda i: roofs[i].bytes_moved)
    print(f"\nThe roofline of {runs[n][0].config.name}:")
    print(terminal_safe(roofs[n].text()))
    return 0


def _profile_task(args) -> int:
    """A coaching task's candidate (a module with launch()), verified on the simulator in the
    verifier's sandboxed child; its counters kernel by kernel at the scored shape, and the modelled
    time the optimiser scores with."""
    from tutor.coach.verify import verify
    from ..engine.analysis.counters import Counters, counters_text
    from ..engine.views.textview import verdict_text

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {args.file}")
    source = path.read_text(encoding="utf-8")
    verdict = verify(args.puzzle, source, "sim")
    record = next((r.to_json() for r in verdict.measures if r.counters), None)
    if args.json:
        print(json.dumps({"task": args.puzzle, "passed": verdict.passed, "shape": record and record["shape"],
                          "kernels": record["counters"] if record else [],
                          "modelled": record.get("modelled") if record else None,
                          "modelled_s": record.get("modelled_s") if record else None}))
        return 0 if record else 1
    if record is None:
        print(verdict_text(verdict))
        print("\nNo counters: the candidate did not run at the scored shape (see above).")
        return 1
    if not verdict.passed:
        print("This candidate does not pass the verifier: these are the counters of what it did.\n")
    lines = source.splitlines()
    shape = tuple(record["shape"])
    names = [k.get("name", f"kernel {n + 1}") if isinstance(k, dict) else f"kernel {n + 1}"
             for n, k in enumerate(record.get("modelled") or [])]
    for n, c in enumerate(record["counters"]):
        name = names[n] if n < len(names) else f"kernel {n + 1}"
        print(terminal_safe(counters_text(Counters.from_json(c), lines, f"{args.puzzle}, launch {n + 1} "
                                          f"({name}) at shape {shape}:")))
        print()
    if record.get("modelled_s") is not None:
        print(f"modelled H200 time of launch() at shape {shape}: {record['modelled_s'] * 1e6:.3g} us, the floor "
              f"{record['floor_s'] * 1e6:.3g} us (a model from the trace, not a measurement: the optimiser's "
              "score on the simulator is the naive kernel's modelled time over this one)")
        from tutor.coach.optimise import kernel_line

        for k in record.get("modelled") or []:
            if isinstance(k, dict):
                print(terminal_safe(f"  {kernel_line(k)}"))
    return 0


def cmd_trace(args) -> int:
    puzzle, source, filename = read_inputs(args)
    with Runner("sim", timeout=args.timeout, session=args.session) as runner:
        result = runner.check(puzzle.id, source, filename, seed=args.seed, keep_traces=True)
    from ..engine.views.textview import trace_text, verdict_text

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


def cmd_content_check(args) -> int:
    from tutor.content_check import run_content_check

    return run_content_check(args.backend, args.puzzles, seed=args.seed)
