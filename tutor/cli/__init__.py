"""`gpu-tutor`: the app by default, and headless subcommands for scripts, CI and workshops.

Exit status everywhere: 0 passed (or done), 1 failed, 2 a usage or input error (unknown puzzle,
missing file), always with one line that says what to do. Nothing here imports numba: the engine's
child process does, so `gpu-tutor list` answers at once.

This module holds only main() and the argparse tree with its shared options; the commands live by
area: puzzle_commands.py (home, list, show, check, trace, content check), ai_commands.py (hint,
doctor, config), coach_commands.py (verify, walkthrough, optimise), inputs.py (UsageError, a command's puzzle and kernel file), and
tutor/workshop/cli.py (workshop init|check, export, report, room). `python -m tutor.cli` runs __main__.py.
"""

from __future__ import annotations

import argparse
import os
import sys

from tutor.ai.config import ConfigError
from ..engine.runner import BACKENDS, DEFAULT_TIMEOUT, RunnerError
from tutor.puzzles import ContentError
from tutor.session import Session
from tutor.serve.command import add_serve_command
from tutor.textsafe import terminal_safe
from tutor.workshop.cli import add_commands as add_workshop_commands
from tutor.workshop.cli import add_workshop_option
from .ai_commands import cmd_config, cmd_doctor, cmd_hint
from .coach_commands import cmd_optimise, cmd_verify, cmd_walkthrough
from .inputs import UsageError
from .puzzle_commands import (cmd_check, cmd_content_check, cmd_home, cmd_list, cmd_profile, cmd_show,
                              cmd_trace)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    args = parser.parse_args(argv)
    args.session = Session.from_environment()  # read once here; every command passes it down
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

    p = sub.add_parser("profile", help="Nsight Compute's memory counters for each config, from the simulator's "
                                       "trace: sectors per request, bank conflicts, active lanes, by line")
    _run_options(p, backends=("sim",), puzzle_help="the puzzle id (see `gpu-tutor list`), or a coaching task "
                                                   "under kernels/ (e.g. softmax): the file is then a module "
                                                   "with launch(), profiled kernel by kernel at the scored shape")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.add_argument("--device", choices=("h200",), default="h200",
                   help="the GPU whose limits and bandwidth model occupancy and the time's lower bound")
    p.add_argument("--line", type=int, default=None,
                   help="one source line's costliest request, lane by lane: which sectors or banks each lane touched")
    p.set_defaults(func=cmd_profile)

    p = sub.add_parser("verify", help="verify a candidate kernel module against a coaching task")
    p.add_argument("task", help="a task under kernels/ (e.g. reduce_sum)")
    p.add_argument("file", help="the candidate module (kernels and launch(out, *inputs))")
    p.add_argument("--backend", choices=("sim", "gpu", "numba-sim"), default="sim")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("walkthrough", help="a coaching task's road from its naive kernel to the expert one, a "
                       "change at a time, with what each step measured on a GPU")
    p.add_argument("task", help="a task under kernels/ with a walkthrough (e.g. reduce_sum)")
    p.add_argument("--no-diff", dest="diffs", action="store_false", help="the words and times, without each step's change")
    p.set_defaults(func=cmd_walkthrough)

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
                        "15m, 90s, 1h (default: optimise_wall_time in the [ai] settings, else 2h); a round "
                        "that has begun runs to its end")
    p.add_argument("--request-timeout", dest="request_timeout", default=None, metavar="TIME",
                   help="how long to wait for each piece of a model's reply, the first one included: 30m, 90s "
                        "(default: optimise_request_timeout in the [ai] settings, else 30m, for a reasoning model "
                        "on your own machine)")
    p.add_argument("--reply-tokens", dest="reply_tokens", type=int, default=None, metavar="N",
                   help="the longest reply per candidate, the model's thinking included on most servers (default: "
                        "optimise_reply_tokens in the [ai] settings, else 16384)")
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

    add_workshop_commands(sub)  # workshop init|check, export, report, room
    add_serve_command(sub, add_workshop_option)

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


def _run_options(p, backends=BACKENDS, puzzle_help="the puzzle id (see `gpu-tutor list`)"):
    p.add_argument("puzzle", help=puzzle_help)
    p.add_argument("file", help="your kernel file")
    p.add_argument("--backend", choices=backends, default=None,
                   help="sim (our tracing simulator), gpu (a CUDA GPU), numba-sim (Numba's simulator); "
                        "default: gpu when one is present, else sim")
    p.add_argument("--seed", type=int, default=None, help="seed for the random configs (to repeat a run)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds before a run is stopped")
