"""One learner's mistake said so that the same mistake by twelve learners reads as one.

A facilitator does not want twenty-seven failure messages; they want "dot: 12 of 27 learners race
on `cache` between `cache[…] = …` and `… += cache[…]`". So each failing run is kept as a small
summary (`failure_summary`, stored with the learner's progress by the app): the failure's kind and
rule, the array, and the *shape* of the line it points at, not its text. Two learners who named
their index `i` and `tid`, or wrote `cuda.threadIdx.x` inline, wrote the same line: a shape keeps
what a line does (which arrays it reads and writes, which operators, which calls) and drops how it
names its scalars and what it indexes with. A kind with no line of its own (a wrong answer) is told
apart by the gist of its message instead, numbers dropped.

`clusters` groups a room's latest failures by (puzzle, kind, rule, array, shapes, gist), largest
first. Everything here reads text someone else wrote: nothing is executed, a line that does not
parse has no shape (and clusters by its gist), and every string kept is short.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

MAX_TEXT = 160  # any string kept in a summary
MODULES = {"cuda", "numba", "math", "np", "numpy"}
BUILTINS = {name for name in dir(builtins) if not name.startswith("_")}  # range, min, abs: what a line calls
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")
_QUOTED = re.compile(r"'[^']*'|`[^`]*`")


def failure_summary(failures, source: str) -> dict | None:
    """The first (most telling) failure of a run, as kept with the learner's progress; None for a
    run that passed. `failures` are the verdict's, already in its order of importance."""
    failures = list(failures)
    if not failures:
        return None
    f = failures[0]
    lines = source.splitlines()
    other_line = next((d.get("other_line") for d in (f.details or []) if isinstance(d, dict) and d.get("other_line")),
                      None)
    summary = {
        "kind": f.kind,
        "rule": f.rule,
        "array": f.array,
        "line": f.line,
        "shape": line_shape(_line(lines, f.line), f.array),
        "other_shape": line_shape(_line(lines, other_line), f.array) if isinstance(other_line, int) else None,
        "gist": gist(f.message),
    }
    return {k: (v[:MAX_TEXT] if isinstance(v, str) else v) for k, v in summary.items()}


def _line(lines: list[str], n) -> str | None:
    return lines[n - 1] if isinstance(n, int) and 1 <= n <= len(lines) else None


def gist(message: str) -> str:
    """A message's first sentence with its numbers and quoted names dropped: two learners' wrong
    answers at different cells read alike."""
    first = re.split(r"(?<=[.:;])\s", message.strip(), maxsplit=1)[0] if message else ""
    return _NUMBER.sub("#", _QUOTED.sub("…", first))[:MAX_TEXT]


def line_shape(text: str | None, array: str | None = None) -> str | None:
    """What a line does, without its names for scalars or its index expressions: arrays (names that
    are indexed, and `array`), modules (cuda, numba, math) and builtins (range) keep their names, every other name is
    `_`, every index is `…`, literals stay. None where there is no line or it does not parse."""
    if not text or not text.strip():
        return None
    code = text.strip()
    for candidate in (code, code + " pass", code.rstrip(":") + ": pass"):
        try:
            tree = ast.parse(candidate)
            break
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
    if tree is None or not tree.body:
        return None
    keep = MODULES | BUILTINS
    if array:
        keep.add(array)
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            keep.add(node.value.id)
    try:
        shaped = _Shaper(keep).visit(tree.body[0])
        text = ast.unparse(shaped)
    except (RecursionError, ValueError, TypeError):
        return None
    text = text.replace("'…'", "…").split("\n")[0]
    return text.removesuffix(": pass").removesuffix(" pass")[:MAX_TEXT]


class _Shaper(ast.NodeTransformer):
    def __init__(self, keep: set[str]):
        self.keep = keep

    def visit_Name(self, node):
        return node if node.id in self.keep else ast.copy_location(ast.Name(id="_", ctx=node.ctx), node)

    def visit_Subscript(self, node):
        value = self.visit(node.value)
        return ast.copy_location(ast.Subscript(value=value, slice=ast.Constant("…"), ctx=node.ctx), node)

    def generic_visit(self, node):
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.FunctionDef)):
            # a compound statement's header is its shape, not its body
            for name in ("body", "orelse"):
                if hasattr(node, name):
                    setattr(node, name, [ast.Pass()])
        return super().generic_visit(node)


@dataclass
class Misconception:
    puzzle: str
    kind: str
    rule: str | None
    array: str | None
    shape: str | None
    other_shape: str | None
    gist: str
    learners: list[str] = field(default_factory=list)  # learner ids, in the room's order

    @property
    def key(self) -> tuple:
        return (self.puzzle, self.kind, self.rule, self.array, self.shape, self.other_shape,
                self.gist if self.shape is None else "")

    def what(self) -> str:
        """The mistake in words: "race on `cache` between `cache[…] = _` and `_ += cache[…]`"."""
        kind = self.kind.replace("_", " ")
        if self.rule:
            kind += f" ({self.rule})"
        out = kind + (f" on `{self.array}`" if self.array else "")
        if self.shape and self.other_shape and self.other_shape != self.shape:
            out += f" between `{self.shape}` and `{self.other_shape}`"
        elif self.shape:
            out += f" at `{self.shape}`"
        elif self.gist:
            out += f": {self.gist}"
        return out

    def describe(self, of: int) -> str:
        n = len(self.learners)
        return f"{self.puzzle}: {n} of {of} learner{'s' if of != 1 else ''}, {self.what()}"


def clusters(latest: Iterable[tuple[str, str, dict]]) -> list[Misconception]:
    """(learner id, puzzle, summary) of each learner's latest failing run on a puzzle, grouped into
    one Misconception per mistake, the largest first (ties: by puzzle, then kind)."""
    groups: dict[tuple, Misconception] = {}
    for learner, puzzle, s in latest:
        if not isinstance(s, dict) or not isinstance(s.get("kind"), str):
            continue
        m = Misconception(puzzle, s["kind"], _text(s.get("rule")), _text(s.get("array")), _text(s.get("shape")),
                          _text(s.get("other_shape")), _text(s.get("gist")) or "")
        found = groups.setdefault(m.key, m)
        if learner not in found.learners:
            found.learners.append(learner)
    return sorted(groups.values(), key=lambda m: (-len(m.learners), m.puzzle, m.kind, m.what()))


def _text(value) -> str | None:
    return value[:MAX_TEXT] if isinstance(value, str) else None
