"""Does a model's hint give the answer away? Judged by running its code, not by reading its tone.

Every piece of code in the hint (fenced blocks and inline spans) is tried on its own, and put into
the learner's file the ways a learner would paste it: as whole functions replacing theirs, or as
statements in place of their kernel's body. If any of these passes the puzzle's checker, or the
code repeats a line of the reference that is not in the starter, the hint is a give-away. The
checks run in the engine's child process (via `check`), never here, and only for modules that pass
the static screen's puzzle grammar (`screen_puzzle_module`): a refused module is never run.
"""

from __future__ import annotations

import ast
import itertools
import re
import textwrap
from dataclasses import dataclass
from typing import Callable

from ..coach.screen import screen_puzzle_module
from ..sourcelines import code_lines, norm

_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.S)
_INLINE = re.compile(r"`([^`\n]+)`")
# Lines every kernel has; repeating them teaches nothing and gives nothing away.
_TRIVIAL = re.compile(r"^(?:@cuda\.jit.*|def .*|return|pass|import .*|from .* import .*|cuda\.syncthreads\(\)|"
                      r"\w+ = cuda\.(?:threadIdx|blockIdx|blockDim|gridDim)\.[xyz]|\w+ = cuda\.grid\(\d\)|"
                      r"\w+, \w+ = cuda\.grid\(2\))$")


@dataclass
class Leak:
    reason: str      # for the re-prompt and the log
    code: str        # the offending piece


def extract_code(text: str) -> list[str]:
    """Fenced blocks first, then inline spans that look like statements or expressions."""
    pieces = [m.group(1).strip("\n") for m in _FENCE.finditer(text)]
    prose = _FENCE.sub("", text)
    for m in _INLINE.finditer(prose):
        span = m.group(1).strip()
        if len(span) > 3 and any(c in span for c in "=([+-*/:<>"):
            pieces.append(span)
    return [p for p in pieces if p.strip()]


def repeated_reference_lines(code: str, reference: str, starter: str, learner: str = "") -> list[str]:
    """Reference lines the code repeats, except trivial ones and those the learner already wrote."""
    known = code_lines(starter) | code_lines(learner)
    ref = {line for line in code_lines(reference) - known if not _TRIVIAL.match(line)}
    return sorted({norm(line.split("#", 1)[0]) for line in code.splitlines()} & ref)


def splices(piece: str, learner: str) -> list[str]:
    """The piece as whole modules a learner could end up with by pasting it."""
    out = []
    parsed = _parse(piece)
    if parsed is None:
        return out
    defs = [n for n in parsed.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    if defs:
        out.append(piece)  # a module on its own
        header = "" if "import" in piece else "import math\nimport numba\nfrom numba import cuda\n\n"
        if header:
            out.append(header + piece)
        out.append(learner.rstrip() + "\n\n\n" + piece + "\n")  # later definitions win
        return out
    body = _kernel_body_lines(learner)
    if body is not None:
        start, end, indent = body
        lines = learner.splitlines()
        block = textwrap.indent(textwrap.dedent(piece), indent).splitlines()
        out.append("\n".join(lines[:start] + block + lines[end:]) + "\n")  # in place of their body
        kept = [ln for ln in lines[start:end] if ln.strip() not in ("pass", "")]
        out.append("\n".join(lines[:start] + kept + block + lines[end:]) + "\n")  # after it
    return out


def _parse(code: str):
    try:
        return ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return None


def _kernel_body_lines(source: str):
    """(first line index, end index, indent) of the body of the file's first @cuda.jit function."""
    tree = _parse(source)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(node.body) > 1:
                first = node.body[1]  # keep a docstring
            line = source.splitlines()[first.lineno - 1]
            indent = line[: len(line) - len(line.lstrip())]
            return first.lineno - 1, node.end_lineno, indent
    return None


class LeakGuard:
    """judge(text) -> a Leak, or None when the hint may be shown whole."""

    def __init__(self, reference: str, starter: str, learner: str, passes: Callable[[str], bool]):
        self.reference, self.starter, self.learner = reference, starter, learner
        self.passes = passes
        self.checks_run = 0
        self.screened_out = 0  # spliced modules the static screen refused to run

    def runnable(self, module: str) -> bool:
        """Only modules in the puzzle grammar are run: a hint's code is model-written, and a fence
        with `os.system(...)` in it must not run anywhere. A refused splice is simply not a
        passing one (the learner's own file may hold what the grammar refuses, a stray print say;
        then none of its splices run)."""
        if screen_puzzle_module(module, "hint.py"):
            self.screened_out += 1
            return False
        return True

    def judge(self, text: str) -> Leak | None:
        pieces = extract_code(text)
        for piece in pieces:
            repeated = repeated_reference_lines(piece, self.reference, self.starter, self.learner)
            if repeated:
                return Leak(f"it repeats the solution's line(s) {', '.join(f'`{r}`' for r in repeated[:3])}", piece)
        candidates = [p for p in pieces if _parse(p) is not None]
        if len(candidates) > 1:  # pasted together, in whichever order makes them work
            orders = (itertools.permutations(candidates) if len(candidates) <= 3
                      else (candidates, candidates[::-1]))
            candidates += ["\n".join(textwrap.dedent(p) for p in order) for order in orders]
        for piece in candidates:
            for module in splices(piece, self.learner):
                if module.strip() == self.learner.strip():
                    continue
                if not self.runnable(module):
                    continue
                self.checks_run += 1
                if self.passes(module):
                    return Leak("its code, pasted into the learner's file, solves the puzzle", piece)
        return None
