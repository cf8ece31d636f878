"""One learner's mistake said so that the same mistake by twelve learners reads as one.

A facilitator does not want twenty-seven failure messages; they want "dot: 12 of 27 learners race
on `cache` between `cache[…] = …` and `… += cache[…]`". So each failing run is kept as a small
summary (`failure_summary`, stored with the learner's progress by the app): the failure's kind and
rule, the array, and the *shape* of the line it points at, not its text. Two learners who named
their index `i` and `tid`, or wrote `cuda.threadIdx.x` inline, wrote the same line: a shape keeps
what a line does (which arrays it reads and writes, which operators, which calls, which constants
an index adds) and drops how it names its scalars. `b[i] * a[i]` is `a[i] * b[i]`, `s = s + x` is
`s += x`, `size > i` is `i < size`: the operands of a sum or a product are put in one order, and
a comparison faces one way.

The line alone does not tell every mistake apart: `out[i] = a[i] + 10` is the out-of-bounds line of
a kernel with no guard and of one whose guard says `<=`. For an out-of-bounds access the summary
keeps the `if` around the line as its other shape (or says there is none); for a race, the other
access. A kind with no line of its own (a wrong answer nobody wrote) is told apart by the gist of
its message instead, numbers dropped; a compiler's or a run's error by its gist and its line.

`clusters` groups a room's latest failures by (puzzle, kind, rule, array, shapes, gist), largest
first. Everything here reads text someone else wrote: nothing is executed, a line that does not
parse (or is longer than any learner writes) has no shape and clusters by its gist, and every
string kept or shown is short and safe to print.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field

from tutor.sourcelines import python_lines
from tutor.textsafe import one_line, terminal_safe

MAX_TEXT = 160  # any string kept in a summary
MAX_LINE = 1_000  # a longer line has no shape: parsing a pasted blob after every run would stall the app
MAX_SOURCE = 200_000  # the source searched for the `if` around an out-of-bounds line
MODULES = {"cuda", "numba", "math", "np", "numpy"}
BUILTINS = {name for name in dir(builtins) if not name.startswith("_")}  # range, min, abs: what a line calls
NO_GUARD = "no if"  # the other shape of an out-of-bounds access with no `if` around it
GIST_IN_KEY = {"compile_error", "runtime_error"}  # their message says what went wrong, not their line
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b", re.IGNORECASE)
_QUOTED = re.compile(r"'[^']*'|`[^`]*`")
_COMMUTATIVE = (ast.Add, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)
_FLIPPED = {ast.Gt: ast.Lt, ast.GtE: ast.LtE}  # `size > i` is `i < size`
_NEGATED = {ast.Lt: ast.GtE, ast.LtE: ast.Gt, ast.Gt: ast.LtE, ast.GtE: ast.Lt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}


def failure_summary(failures, source: str) -> dict | None:
    """The first (most telling) failure of a run, as kept with the learner's progress; None for a
    run that passed. `failures` are the verdict's, already in its order of importance."""
    failures = list(failures)
    if not failures:
        return None
    f = failures[0]
    lines = python_lines(source)
    other_line = next((d.get("other_line") for d in (f.details or []) if isinstance(d, dict) and d.get("other_line")),
                      None)
    other_shape = line_shape(_line(lines, other_line), f.array) if isinstance(other_line, int) else None
    if f.kind == "out_of_bounds" and other_shape is None:
        other_shape = guard_shape(source, f.line)
    summary = {
        "kind": f.kind,
        "rule": f.rule,
        "array": f.array,
        "line": f.line,
        "shape": line_shape(_line(lines, f.line), f.array),
        "other_shape": other_shape,
        "gist": gist(f.message),
    }
    return {k: (one_line(v)[:MAX_TEXT] if isinstance(v, str) else v) for k, v in summary.items()}


def _line(lines: list[str], n) -> str | None:
    return lines[n - 1] if isinstance(n, int) and 1 <= n <= len(lines) else None


def gist(message: str) -> str:
    """A message's first sentence with its numbers (nan and inf too) and quoted names dropped: two
    learners' wrong answers at different cells read alike."""
    first = re.split(r"(?<=[.;])\s", message.strip(), maxsplit=1)[0] if message else ""
    return _NUMBER.sub("#", _QUOTED.sub("…", first[:4 * MAX_TEXT]))[:MAX_TEXT]


def line_shape(text: str | None, array: str | None = None) -> str | None:
    """What a line does, without its names for scalars: arrays (names that are indexed, and
    `array`), modules (cuda, numba, math) and builtins (range) keep their names, every other name
    is `_`; an index keeps the constants it adds (`a[_ + 1]`) and is `…` where it has none; literals
    stay. None where there is no line, it does not parse, or it is longer than MAX_LINE."""
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_LINE:
        return None
    code = _without_comment(text.strip())
    tree = None
    for candidate in (code, code + " pass", code.rstrip(":") + ": pass"):
        try:
            tree = ast.parse(candidate)
            break
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
    if tree is None or not tree.body:
        return None
    return _shape_of(tree.body[0], _arrays(tree, array))


def _without_comment(code: str) -> str:
    """The line without its `# comment`, so that a line cut short can be completed (`if i < n  # guard`
    is `if i < n:`); a `#` inside a string stays."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.COMMENT:
                return code[:token.start[1]].rstrip()
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass  # cut short inside brackets or a string: the comment (if any) came before the cut
    return code


def guard_shape(source: str, line: int | None) -> str | None:
    """The shape of the innermost `if` around `line` (`if not …:` in its else), NO_GUARD where
    there is none, None where the source does not parse. An early `if …: return` before the line
    guards it too."""
    if not isinstance(line, int) or not isinstance(source, str) or len(source) > MAX_SOURCE:
        return None
    try:
        tree = ast.parse(source)
        test = _guard(tree.body, line, None)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if test is None:
        return NO_GUARD
    node = ast.If(test=test, body=[ast.Pass()], orelse=[])
    return _shape_of(node, _arrays(node, None))


def _guard(body: list[ast.stmt], line: int, guard: ast.expr | None) -> ast.expr | None:
    for stmt in body:
        if not stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            if isinstance(stmt, ast.If) and stmt.end_lineno < line and stmt.body and \
                    isinstance(stmt.body[-1], (ast.Return, ast.Continue, ast.Break)) and not stmt.orelse:
                guard = ast.UnaryOp(ast.Not(), stmt.test)  # `if i >= size: return` guards what follows
            continue
        if isinstance(stmt, ast.If) and line > stmt.test.end_lineno:
            inside = [s for s in stmt.body if s.lineno <= line <= (s.end_lineno or s.lineno)]
            if inside:
                return _guard(stmt.body, line, stmt.test)
            return _guard(stmt.orelse, line, ast.UnaryOp(ast.Not(), stmt.test))
        for name in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list) and any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in inner):
                return _guard(inner, line, guard)
        return guard
    return guard


def _arrays(tree: ast.AST, array: str | None) -> set[str]:
    keep = MODULES | BUILTINS
    if array:
        keep = keep | {array}
    return keep | {node.value.id for node in ast.walk(tree)
                   if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)}


def _shape_of(node: ast.AST, keep: set[str]) -> str | None:
    try:
        shaped = _Shaper(keep).visit(_augmented(node))
        text = ast.unparse(shaped)
    except (RecursionError, ValueError, TypeError, AttributeError):
        return None
    text = text.replace("'…'", "…").split("\n")[0]
    return terminal_safe(text.removesuffix(": pass").removesuffix(" pass"))[:MAX_TEXT]


def _augmented(node: ast.AST) -> ast.AST:
    """`s = s + x` (or `s = x + s`) as `s += x`: one line, two spellings."""
    if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.BinOp)
            and not isinstance(node.targets[0], ast.Tuple)):
        target, value = ast.unparse(node.targets[0]), node.value
        if ast.unparse(value.left) == target:
            return ast.copy_location(ast.AugAssign(node.targets[0], value.op, value.right), node)
        if isinstance(value.op, _COMMUTATIVE) and ast.unparse(value.right) == target:
            return ast.copy_location(ast.AugAssign(node.targets[0], value.op, value.left), node)
    return node


class _Shaper(ast.NodeTransformer):
    def __init__(self, keep: set[str]):
        self.keep = keep

    def visit_Name(self, node):
        return node if node.id in self.keep else ast.copy_location(ast.Name(id="_", ctx=node.ctx), node)

    def visit_Subscript(self, node):
        value = self.visit(node.value)
        index = _Index().visit(node.slice)
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if all(isinstance(p, ast.Name) and p.id == "_" for p in parts):
            index = ast.Constant("…")
        return ast.copy_location(ast.Subscript(value=value, slice=index, ctx=node.ctx), node)

    def visit_BinOp(self, node):
        if not isinstance(node.op, _COMMUTATIVE):
            return self.generic_visit(node)
        return _in_order(node, self.visit)

    def visit_BoolOp(self, node):
        values = sorted((self.visit(v) for v in node.values), key=ast.unparse)
        return ast.copy_location(ast.BoolOp(op=node.op, values=values), node)

    def visit_Compare(self, node):
        return _facing(self.generic_visit(node))

    def visit_UnaryOp(self, node):
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.Not) and isinstance(operand, ast.Compare) and len(operand.ops) == 1 \
                and type(operand.ops[0]) in _NEGATED:
            return _facing(ast.Compare(operand.left, [_NEGATED[type(operand.ops[0])]()], operand.comparators))
        return ast.copy_location(ast.UnaryOp(op=node.op, operand=operand), node)

    def generic_visit(self, node):
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.FunctionDef)):
            # a compound statement's header is its shape, not its body
            for name in ("body", "orelse"):
                if hasattr(node, name):
                    setattr(node, name, [ast.Pass()])
        return super().generic_visit(node)


class _Index(ast.NodeTransformer):
    """An index as the constants it adds: every name, attribute, call or nested index is `_`, and
    an expression with no constant in it is `_` as a whole (`i + stride`, `blockIdx.x * blockDim.x
    + threadIdx.x`); `i + 1`, `3 - i` and `0, j` keep what tells them apart."""

    def generic_visit(self, node):
        if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Starred, ast.NamedExpr)):
            return ast.Name(id="_", ctx=ast.Load())
        if isinstance(node, ast.Tuple):
            return ast.Tuple(elts=[self.visit(e) for e in node.elts], ctx=ast.Load())
        if isinstance(node, ast.Slice):
            return ast.Slice(*(None if p is None else self.visit(p) for p in (node.lower, node.upper, node.step)))
        node = super().generic_visit(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, _COMMUTATIVE):
            node = _in_order(node, lambda n: n)
        if isinstance(node, (ast.BinOp, ast.UnaryOp)) and not any(isinstance(n, ast.Constant) for n in ast.walk(node)):
            return ast.Name(id="_", ctx=ast.Load())
        return node


def _in_order(node: ast.BinOp, visit) -> ast.AST:
    """A chain of one commutative operator with its operands in one order: names and arrays first,
    constants last (`a[…] * b[…]`, `_ + 1`)."""
    def operands(n):
        if isinstance(n, ast.BinOp) and type(n.op) is type(node.op):
            return operands(n.left) + operands(n.right)
        return [visit(n)]

    parts = sorted(operands(node), key=lambda n: (isinstance(n, ast.Constant), ast.unparse(n)))
    out = parts[0]
    for part in parts[1:]:
        out = ast.BinOp(left=out, op=type(node.op)(), right=part)
    return ast.copy_location(out, node)


def _facing(node: ast.Compare) -> ast.Compare:
    """One comparison faces one way: `size > i` as `i < size`, `0 == i` as `i == 0`."""
    if len(node.ops) != 1:
        return node
    op, left, right = node.ops[0], node.left, node.comparators[0]
    if type(op) in _FLIPPED:
        return ast.Compare(right, [_FLIPPED[type(op)]()], [left])
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(left, ast.Constant) and not isinstance(right, ast.Constant):
        return ast.Compare(right, [op], [left])
    return node


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
        shapes = (self.shape, self.other_shape)
        if self.kind == "race":  # one race, whichever of its two accesses the detector named first
            shapes = tuple(sorted(s or "" for s in shapes))
        told_by_gist = self.shape is None or self.kind in GIST_IN_KEY
        return (self.puzzle, self.kind, self.rule, self.array, *shapes, self.gist if told_by_gist else "")

    def what(self) -> str:
        """The mistake in words: "race on `cache` between `cache[…] = _` and `_ += cache[…]`"."""
        kind = self.kind.replace("_", " ")
        if self.rule:
            kind += f" ({self.rule})"
        out = kind + (f" on `{self.array}`" if self.array else "")
        if self.kind == "out_of_bounds" and self.shape:
            out += f" at `{self.shape}`"
            if self.other_shape == NO_GUARD:
                out += ", with no `if` around it"
            elif self.other_shape:
                out += f" under `{self.other_shape}`"
        elif self.shape and self.other_shape and self.other_shape != self.shape:
            out += f" between `{self.shape}` and `{self.other_shape}`"
        elif self.shape:
            out += f" at `{self.shape}`"
        if self.gist and (self.shape is None or self.kind in GIST_IN_KEY):
            out += f": {self.gist}"
        return out

    def describe(self, of: int) -> str:
        n = len(self.learners)
        return f"{self.puzzle}: {n} of {of} learner{'s' if of != 1 else ''}, {self.what()}"


def clusters(latest: Iterable[tuple[str, str, dict]]) -> list[Misconception]:
    """(learner id, puzzle, summary) of each learner's latest failing run on a puzzle, grouped into
    one Misconception per mistake, the largest first (ties: by puzzle, then kind). Its texts are
    safe to print: a summary comes from a file a learner could have edited."""
    groups: dict[tuple, Misconception] = {}
    for learner, puzzle, s in latest:
        if not isinstance(s, dict) or not isinstance(s.get("kind"), str):
            continue
        m = Misconception(_text(puzzle) or "", _text(s["kind"]) or "", _text(s.get("rule")), _text(s.get("array")),
                          _text(s.get("shape")), _text(s.get("other_shape")), _text(s.get("gist")) or "")
        found = groups.setdefault(m.key, m)
        if learner not in found.learners:
            found.learners.append(learner)
    return sorted(groups.values(), key=lambda m: (-len(m.learners), m.puzzle, m.kind, m.what()))


def _text(value) -> str | None:
    """A field of a summary as one line of what it holds: a newline in an edited file would start a
    row of the report's table of its own, a zero-width space split one mistake into two that read alike."""
    return one_line(value[:MAX_TEXT])[:MAX_TEXT] if isinstance(value, str) else None
