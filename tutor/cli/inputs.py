"""What a command reads from its arguments: the puzzle id and the kernel file, and `UsageError`, the
exit-status-2 error a command raises when what it was given is wrong (main() prints its one line).

A module of its own because every command module raises UsageError and both the puzzle commands and
`hint` read a puzzle and a kernel file, while main() imports the command modules: kept here, none of
them imports tutor.cli itself, so there is no import circle (tests/test_layers.py forbids them).
"""

from __future__ import annotations

import os
from pathlib import Path

from tutor.puzzles import load_catalog


class UsageError(Exception):
    pass


def find_puzzle(pid: str):
    catalog = load_catalog()
    try:
        return catalog.get(pid)
    except KeyError as e:
        raise UsageError(str(e).strip("'\"") + " (see `gpu-tutor list`)") from None


def read_inputs(args):
    puzzle = find_puzzle(args.puzzle)
    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {args.file} (save the starter with `gpu-tutor show {puzzle.id} "
                         f"--starter > {puzzle.id}.py`)")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {args.file}: {e}") from None
    return puzzle, source, os.fspath(path)
