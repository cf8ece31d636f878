"""Does a model's hint give the answer away? Judged by what a learner could paste, however it is dressed.

A model that is told not to hand over the solution still does, in every markup there is: fenced
with backticks or tildes, indented four spaces, wrapped in `<pre><code>`, typed after `>>>`
prompts, cut into shuffled pieces, hidden in a comment, a docstring or a string, spelled with a
fullwidth plus or a zero-width space, or reduced to its right-hand sides. So the guard reads the
reply as a learner would copy from it:

1. Normalise the text (Unicode NFKC, invisible characters dropped, look-alike operators mapped),
   then pull out every piece of code, whatever its markup, and every Python-parsable line of prose.
2. Turn each statement into tokens with its names renamed canonically (the kernel's parameters by
   position, every other local to one placeholder), so a renamed variable or a one-letter typo
   changes a token or two, not the match.
3. Withhold the hint when its statements, taken as a set (their order and their pieces do not
   matter), come close to at least half of the solution statements the learner has yet to write,
   and to at least two of them. Trivial statements (guards, `else:`, indices, barriers, headers,
   initialisations) never count, and nor does code already on the learner's screen.

Only if that finds nothing is the code run: pasted into the learner's file the ways a learner
would paste it, in the engine's child process (via `passes`), and only for modules that pass the
static screen's puzzle grammar (`check_puzzle_module`): a refused module is never run.
"""

from __future__ import annotations

import ast
import difflib
import html
import io
import itertools
import keyword
import math
import re
import textwrap
import tokenize
import unicodedata
from dataclasses import dataclass, field
from typing import Callable

from ..engine.loading.static_rules import check_puzzle_module

# A hint statement stands for a solution statement when it reproduces this share of its canonical
# tokens: names cost nothing (they are renamed), so 0.8 tolerates a typo in an attribute or an
# operator, one token in five, and no more.
CLOSE = 0.8
EXACT_BELOW = 8  # tokens: a shorter statement must match exactly (one of six is `out[x]` for `tile[x]`)
# Withheld once the hint stands for half of what is left to write. A kernel is a load half and a
# combine half (load and zero-fill, then reduce and store): either one as code is more than the
# single illustrative line level 2 allows, while below half the learner still writes most of it.
MOST = 0.5
AT_LEAST = 2     # and never for one statement, unless the solution has only one (map, guard)
MIN_TOKENS = 5   # a solution statement shorter than this (`stride //= 2`) is too generic to count
MIN_SIDE = 3     # an expression shorter than this (`total`, `0`) stands for nothing

MAX_TEXT = 20_000   # characters of a reply read for closeness (a model's hint is far shorter)
MAX_DEPTH = 3       # comments in strings in comments: deep enough for any disguise seen
WINDOW = 24         # words: the longest run of prose tried as one statement

# Names that mean the same in every kernel and so stay themselves; all others are renamed.
_KEEP = {"cuda", "numba", "math", "np", "numpy", "range", "len", "min", "max", "abs", "float", "int", "True",
         "False", "None"}
_LOOKALIKES = str.maketrans({"\u2212": "-", "\u2013": "-", "\u00d7": "*", "\u22c5": "*", "\u00f7": "/",
                             "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2264": "<=",
                             "\u2265": ">=", "\u2260": "!=", "\u2028": "\n", "\u2029": "\n"})
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
_INLINE = re.compile(r"(`+)((?:(?!\n[ \t]*\n).)+?)\1", re.S)
_PRE = re.compile(r"<pre\b[^>]*>(.*?)(?:</pre\s*>|\Z)", re.S | re.I)
_CODE = re.compile(r"<(code|kbd|samp|tt)\b[^>]*>(.*?)(?:</\1\s*>|\Z)", re.S | re.I)
# HTML tags by name, attributes only as name=value: `<b and c>` in `if i<b and c>0:` is no tag.
_TAG = re.compile(r"</?(?:p|div|span|b|i|u|em|strong|code|kbd|samp|tt|var|pre|ul|ol|li|blockquote|h[1-6]|"
                  r"table|thead|tbody|tr|td|th|a|font|small|big|sub|sup|details|summary)"
                  r"(?:\s+[\w-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+))*\s*/?>", re.I)
_BR = re.compile(r"<br\s*/?>", re.I)
_PROMPT = re.compile(r"^\s*(?:>>>|\.\.\.)(?: |$)")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_CODEISH = re.compile(r"[=\[(+\-*/<>%]")


@dataclass
class Leak:
    reasons: list[str]                              # every reason, no code in them (they are logged)
    code: list[str] = field(default_factory=list)   # the hint's own lines that gave it away (for the re-ask)

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)


@dataclass
class Coverage:
    """How much of what the learner has left to write the hint's code stands for."""

    matched: list[_Form]   # one hint statement per solution statement it stands for
    sides: int             # how many of those only by their right-hand side
    left: int              # the solution's non-trivial statements not yet in the learner's file
    total: int             # the solution's non-trivial statements

    @property
    def needed(self) -> int:
        if self.left == 0:
            return 1 << 30  # nothing left to give away
        return max(min(AT_LEAST, self.total), math.ceil(self.left * MOST))

    @property
    def gives_away(self) -> bool:
        return len(self.matched) >= self.needed


def normalise(text: str) -> str:
    """What a learner's editor would hold once they paste: fullwidth forms folded (NFKC), invisible
    format characters gone, the usual look-alike operators made ASCII."""
    text = unicodedata.normalize("NFKC", text).translate(_LOOKALIKES)
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def extract_code(text: str) -> list[str]:
    """Every piece of code in a reply, whatever marks it up: fences of backticks or tildes (quoted or
    indented too), `<pre>`/`<code>`, `>>>` prompts, four-space blocks, inline spans, and paragraphs
    of prose that parse as Python."""
    return [p.code for p in _pieces(normalise(text[:MAX_TEXT]))]


class LeakGuard:
    """judge(text) -> a Leak, or None when the hint may be shown whole."""

    def __init__(self, reference: str, starter: str, learner: str, passes: Callable[[str], bool]):
        self.reference, self.starter, self.learner = reference, starter, learner
        self.passes = passes
        self.checks_run = 0
        self.screened_out = 0  # spliced modules the static screen refused to run
        self._learner_params = _params(learner) or _params(starter) or _params(reference)
        self._names = _constants(reference) | _constants(starter) | _constants(learner)
        # What is on the learner's screen already: quoting it gives nothing away.
        self._shown_statements, self._shown_expressions = set(), set()
        for source, params in ((starter, _params(starter)), (learner, self._learner_params)):
            for tree in _trees(source):
                self._shown_statements |= {f.whole for f in _forms_of_tree(tree, params, self._names)}
                self._shown_expressions |= _expressions(tree, params, self._names)
        ref = _parse(reference) or ast.Module(body=[], type_ignores=[])
        solution = _forms_of_tree(ref, _params(reference), self._names, keep_trivial=False)
        self._solution_total = len(solution)
        self._solution = [f for f in solution if f.whole not in self._shown_statements]

    def runnable(self, module: str) -> bool:
        """Only modules in the puzzle grammar are run: a hint's code is model-written, and a fence
        with `os.system(...)` in it must not run anywhere. A refused splice is simply not a
        passing one (the learner's own file may hold what the grammar refuses, a stray print say;
        then none of its splices run)."""
        if check_puzzle_module(module, "hint.py"):
            self.screened_out += 1
            return False
        return True

    def coverage(self, text: str) -> Coverage:
        clean = normalise(text[:MAX_TEXT])
        forms = [f for f in self._hint_forms(_pieces(clean))
                 if f.whole not in self._shown_statements
                 and not (f.is_expression and f.side in self._shown_expressions)]
        pairs = _match(forms, self._solution)
        sides = sum(1 for h, s in pairs if forms[h].is_expression or _close(forms[h].whole, self._solution[s].whole)
                    < CLOSE)
        return Coverage([forms[h] for h, _ in pairs], sides, len(self._solution), self._solution_total)

    def judge(self, text: str) -> Leak | None:
        covered = self.coverage(text)
        if covered.gives_away:
            return Leak(self._reasons(covered, text), list(dict.fromkeys(f.source for f in covered.matched)))
        return self._run(text)

    # -- the closeness check ---------------------------------------------------------------------
    def _hint_forms(self, pieces) -> list[_Form]:
        seen, out = set(), []
        for n, piece in enumerate(pieces):
            for form in _forms_of_code(piece.code, piece.origin, self._learner_params, self._names, 0):
                if form.source not in seen:
                    seen.add(form.source)
                    out.append(_Form(form.source, form.whole, form.side, form.origin, form.is_expression, n))
        return out

    def _reasons(self, covered: Coverage, text: str) -> list[str]:
        """Every reason, each a sentence without code (they go to the log and the status line)."""
        reasons = [f"its code stands for {len(covered.matched)} of the {covered.left} statements of the solution "
                   "that the learner has yet to write (renamed names and small typos still count)"]
        pieces = {f.piece for f in covered.matched}
        if len(pieces) > 1:
            reasons.append(f"it is spread over {len(pieces)} pieces of code, which add up to the solution in any "
                           "order")
        if any(f.origin == "hidden" for f in covered.matched):
            reasons.append("part of it is hidden in comments, docstrings or strings, which a learner can still copy")
        if any(f.origin == "prose" for f in covered.matched):
            reasons.append("part of it is written as plain lines of prose, which a learner can still copy")
        if covered.sides:
            reasons.append(f"{covered.sides} of those statements {'is' if covered.sides == 1 else 'are'} given "
                           "as right-hand sides only, which are the work itself")
        if _disguised(text):
            reasons.append("it uses invisible or look-alike characters, which a paste turns back into code")
        return reasons

    # -- the running check -----------------------------------------------------------------------
    def _run(self, text: str) -> Leak | None:
        pieces = [p.code for p in _pieces(normalise(text)) if p.block and _runnable_piece(p.code)]
        candidates = list(dict.fromkeys(pieces))
        if 1 < len(candidates) <= 8:  # pasted together, in whichever order makes them work
            orders = (itertools.permutations(candidates) if len(candidates) <= 3
                      else (candidates, candidates[::-1]))
            candidates += ["\n".join(textwrap.dedent(p) for p in order) for order in orders]
        for piece in dict.fromkeys(candidates):
            for module in splices(piece, self.learner):
                if module.strip() == self.learner.strip():
                    continue
                if not self.runnable(module):
                    continue
                self.checks_run += 1
                if self.passes(module):
                    return Leak(["its code, pasted into the learner's file, solves the puzzle"], [piece])
        return None


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


# -- pieces of code in a reply ---------------------------------------------------------------------

@dataclass
class _Piece:
    code: str
    origin: str    # fence, indented, html, prompt, inline, prose
    block: bool    # a unit a learner would paste whole (so worth running)


def _pieces(text: str) -> list[_Piece]:
    """Fences first (their code is taken as it stands), then HTML, prompts, four-space blocks and
    inline spans in what is left, and last the paragraphs of prose themselves."""
    pieces: list[_Piece] = []
    prose = _fences([_unquote(line) for line in text.splitlines()], pieces)
    text = _BR.sub("\n", "\n".join(prose))

    def pre(m):
        pieces.append(_Piece(_html_text(m.group(1)), "html", True))
        return "\n\n"

    def code(m):
        pieces.append(_Piece(_html_text(m.group(2)), "html", "\n" in m.group(2)))
        return " "

    text = _CODE.sub(code, _PRE.sub(pre, text))
    prose = _blocks(html.unescape(_TAG.sub(" ", text)).splitlines(), pieces)

    def inline(m):
        pieces.append(_Piece(m.group(2).strip(), "inline", False))
        return " "

    rest = _INLINE.sub(inline, "\n".join(prose))
    for paragraph in re.split(r"\n[ \t]*\n", rest):
        lines = [_LIST.sub("", line) for line in paragraph.splitlines()]
        if _CODEISH.search("\n".join(lines)):  # prose with no operator or bracket holds no statement
            pieces.append(_Piece(textwrap.dedent("\n".join(lines)).strip("\n"), "prose", True))
    return [p for p in pieces if p.code.strip()]


def _unquote(line: str) -> str:
    """Blockquote markers off, `>>>` prompts kept for later."""
    while True:
        stripped = line.lstrip()
        if stripped.startswith(">") and not _PROMPT.match(line):
            line = stripped[1:]
            if line.startswith(" "):
                line = line[1:]
            continue
        return line


def _html_text(fragment: str) -> str:
    return html.unescape(_TAG.sub("", fragment)).strip("\n")


def _fences(lines: list[str], pieces: list[_Piece]) -> list[str]:
    prose, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
            prose.append(lines[i])
            i += 1
            continue
        indent, mark = len(m.group(1).expandtabs()), m.group(2)
        close = re.compile(rf"^\s*{re.escape(mark[0])}{{{len(mark)},}}\s*$")
        body = []
        i += 1
        while i < len(lines) and not close.match(lines[i]):
            line = lines[i].expandtabs()
            cut = min(indent, len(line) - len(line.lstrip()))
            body.append(line[cut:])
            i += 1
        i += 1  # the closing fence (or the end of the reply)
        pieces.append(_Piece(textwrap.dedent("\n".join(body)).strip("\n"), "fence", True))
        prose.append("")
    return prose


def _blocks(lines: list[str], pieces: list[_Piece]) -> list[str]:
    """Four-space blocks and runs of prompt lines become pieces; the rest stays prose."""
    prose, i = [], 0
    while i < len(lines):
        if _PROMPT.match(lines[i]):
            run = []
            while i < len(lines) and _PROMPT.match(lines[i]):
                run.append(re.sub(r"^\s*(?:>>>|\.\.\.) ?", "", lines[i]))
                i += 1
            pieces.append(_Piece(textwrap.dedent("\n".join(run)), "prompt", True))
            prose.append("")
            continue
        if lines[i].startswith(("    ", "\t")) and lines[i].strip():
            run = []
            while i < len(lines) and (lines[i].startswith(("    ", "\t")) or not lines[i].strip()):
                run.append(lines[i])
                i += 1
            pieces.append(_Piece(textwrap.dedent("\n".join(run)).strip("\n"), "indented", True))
            prose.append("")
            continue
        prose.append(lines[i])
        i += 1
    return prose


def _runnable_piece(code: str) -> bool:
    tree = _parse(code)
    return tree is not None and any(not isinstance(n, ast.Expr) for n in tree.body)


# -- statements as canonical tokens ----------------------------------------------------------------

@dataclass(frozen=True)
class _Form:
    source: str                # the statement as written (normalised), for the re-ask
    whole: tuple               # its canonical tokens
    side: tuple | None         # those of its value, test or iterable, when it has one worth matching
    origin: str
    is_expression: bool = False
    piece: int = 0             # which piece of the reply it came from


def _forms_of_code(code: str, origin: str, params, names, depth: int) -> list[_Form]:
    """Statements of a piece: parsed whole when it parses, else line by line (and by runs of
    words in a line), with what its comments and strings say read as text of their own."""
    out = []
    tree = _parse(code)
    if tree is not None:
        own = _params(code) or params
        out += _forms_of_tree(tree, own, names, origin=origin)
        hidden = _strings(tree) + [_comments(code)]
    else:
        hidden = [_comments(code, broken=True)]
        for part in _trees(code):
            out += _forms_of_tree(part, params, names, origin=origin)
    if depth < MAX_DEPTH:
        for text in hidden:
            if text.strip():
                out += _forms_of_text(text, params, names, depth + 1)
    return out


def _forms_of_text(text: str, params, names, depth: int) -> list[_Form]:
    """A comment or a string, read as a reply of its own (it may hold a whole kernel)."""
    out = []
    for piece in [_Piece(textwrap.dedent(text), "hidden", True), *_pieces(text)]:
        out += _forms_of_code(piece.code, "hidden", params, names, depth)
    return out


def _trees(code: str) -> list[ast.Module]:
    """The code parsed whole, or else what parses of it line by line."""
    tree = _parse(code)
    if tree is not None:
        return [tree]
    return [part for line in code.splitlines() for part in _line_parts(line)]


def _line_parts(line: str) -> list[ast.Module]:
    """The line as a statement, or the runs of its words that parse as code."""
    whole = _parse_line(line)
    if whole is not None:
        return [whole]
    if line.lstrip().startswith("|"):  # a Markdown table row: each cell on its own
        return [part for cell in line.split("|") for part in _line_parts(cell)]
    words, out, start = line.split(), [], 0
    while start < len(words):
        for end in range(min(len(words), start + WINDOW), start, -1):
            run = " ".join(words[start:end])
            if not _CODEISH.search(run):
                continue
            tree = _parse_line(run)
            if tree is not None:
                out.append(tree)
                start = end
                break
        else:
            start += 1
    return out


def _parse_line(line: str):
    """One line of code, a compound statement's header included (`if i < size:`, `elif ...:`);
    the Markdown emphasis or the full stop of the sentence around it dropped."""
    s = line.strip().strip("*").strip()
    for c in dict.fromkeys((s, s if s.endswith("...") else s.rstrip(".,;!?"))):
        if c.startswith("elif "):
            c = c[2:]
        if not c or re.match(r"(?:else|try|except|finally)\b", c):
            continue
        tree = _parse(c) or (_parse(c + " pass") if c.endswith(":") else None)
        if tree is not None and tree.body:
            return tree
    return None


def _forms_of_tree(tree, params, names, origin: str = "", keep_trivial: bool = True) -> list[_Form]:
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        if not keep_trivial and _trivial(node):
            continue
        form = _form(node, params, names, origin)
        if form is None or (not keep_trivial and len(form.whole) < MIN_TOKENS):
            continue
        out.append(form)
    return out


def _form(node, params, names, origin):
    side = None
    if isinstance(node, (ast.If, ast.While)):
        source = f"{'if' if isinstance(node, ast.If) else 'while'} {ast.unparse(node.test)}:"
        side = node.test
    elif isinstance(node, ast.For):
        source = f"for {ast.unparse(node.target)} in {ast.unparse(node.iter)}:"
        side = node.iter
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With)):
        return None
    elif isinstance(node, ast.AugAssign):
        source = ast.unparse(node)
        expanded = ast.Assign(targets=[node.target], value=ast.BinOp(node.target, node.op, node.value), lineno=0)
        whole = _tokens(ast.unparse(expanded), params, names)
        value = _tokens(ast.unparse(node.value), params, names)
        return _Form(source, whole, value if len(value) >= MIN_SIDE else None, origin)
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.Return)):
        source = ast.unparse(node)
        side = node.value
    elif isinstance(node, ast.Expr):
        source = ast.unparse(node)
        value = _tokens(source, params, names)
        return _Form(source, value, value if len(value) >= MIN_SIDE else None, origin, True)
    else:
        source = ast.unparse(node)
    whole = _tokens(source, params, names)
    value = _tokens(ast.unparse(side), params, names) if side is not None else None
    return _Form(source, whole, value if value and len(value) >= MIN_SIDE else None, origin)


def _expressions(tree, params, names) -> set[tuple]:
    """Every expression on the learner's screen: a hint naming `a[i]` from their own line quotes it."""
    return {_tokens(ast.unparse(n), params, names) for n in ast.walk(tree) if isinstance(n, ast.expr)}


def _trivial(node) -> bool:
    """Lines every kernel has, or that teach the shape without the work: they never count."""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass, ast.Break, ast.Continue, ast.Return, ast.Global,
                         ast.Nonlocal, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With)):
        return True
    if isinstance(node, ast.Expr):
        v = node.value
        return isinstance(v, ast.Constant) or (isinstance(v, ast.Call) and not v.args and _from_cuda(v.func))
    if isinstance(node, (ast.If, ast.While)):
        return _simple(node.test)
    if isinstance(node, ast.For):
        it = node.iter
        return isinstance(it, ast.Call) and ast.unparse(it.func) == "range" and all(_simple(a) for a in it.args)
    if isinstance(node, ast.Assign):
        targets_are_names = all(isinstance(t, (ast.Name, ast.Tuple)) for t in node.targets)
        return targets_are_names and (_index_source(node.value) or _constant(node.value))
    return False


def _simple(expr) -> bool:
    """No arithmetic, indexing or call: the shape of a guard or a loop, not its work."""
    return not any(isinstance(n, (ast.BinOp, ast.Subscript, ast.Call)) for n in ast.walk(expr))


def _from_cuda(expr) -> bool:
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name) and expr.id == "cuda"


def _index_source(expr) -> bool:
    if isinstance(expr, ast.Tuple):
        return all(_index_source(e) for e in expr.elts)
    if isinstance(expr, ast.Call):
        return _from_cuda(expr.func) and ast.unparse(expr.func) in ("cuda.grid", "cuda.gridsize")
    return isinstance(expr, ast.Attribute) and _from_cuda(expr)


def _constant(expr) -> bool:
    if isinstance(expr, ast.UnaryOp):
        expr = expr.operand
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
        expr = expr.args[0]  # numba.float32(0)
    return isinstance(expr, ast.Constant)


def _tokens(source: str, params, names) -> tuple:
    """Canonical tokens: the kernel's parameters by position, the puzzle's constants and the CUDA
    API as themselves, every other name one placeholder, numbers by value."""
    out, after_dot = [], False
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return ()
    for tok in toks:
        if tok.type == tokenize.NAME:
            name = tok.string
            if after_dot or keyword.iskeyword(name) or name in _KEEP or name in names:
                out.append(name)
            elif name in params:
                out.append(f"P{params.index(name)}")
            else:
                out.append("ID")
        elif tok.type == tokenize.NUMBER:
            out.append(_number(tok.string))
        elif tok.type == tokenize.STRING:
            out.append("STR")
        elif tok.type == tokenize.OP:
            out.append(tok.string)
        after_dot = tok.type == tokenize.OP and tok.string == "."
    return tuple(out)


def _number(text: str) -> str:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _match(forms: list[_Form], solution: list[_Form]) -> list[tuple[int, int]]:
    """Solution statements paired one to one with the hint statements that stand for them, as many
    pairs as possible: a set, so the hint's order and pieces do not matter. The closest pairs are
    tried first, so the pairing (and the reasons told) is the natural one."""
    scores = [[(_score(form, ref), s) for s, ref in enumerate(solution)] for form in forms]
    edges = [[s for score, s in sorted(row, reverse=True) if score >= CLOSE] for row in scores]
    owner: dict[int, int] = {}

    def assign(h: int, visited: set) -> bool:
        for s in edges[h]:
            if s in visited:
                continue
            visited.add(s)
            if s not in owner or assign(owner[s], visited):
                owner[s] = h
                return True
        return False

    best = sorted(range(len(forms)), key=lambda h: -max((score for score, _ in scores[h]), default=0))
    for h in best:
        if edges[h]:
            assign(h, set())
    return sorted((h, s) for s, h in owner.items())


def _score(form: _Form, ref: _Form) -> float:
    """How closely a hint statement stands for a solution statement: whole, or by its right-hand
    side (an expression for a statement's value, test or iterable)."""
    whole = 0.0 if form.is_expression else _close(form.whole, ref.whole)
    side = _close(form.side, ref.side) if form.side is not None and ref.side is not None else 0.0
    return max(whole, side)


def _close(a: tuple, b: tuple) -> float:
    if not a or not b:
        return 0.0
    if max(len(a), len(b)) < EXACT_BELOW:
        return float(a == b)
    same = sum(block.size for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return same / max(len(a), len(b))


# -- small readers ---------------------------------------------------------------------------------

def _parse(code: str):
    try:
        return ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _params(source: str) -> list[str]:
    tree = _parse(source)
    if tree is None:
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            return [a.arg for a in node.args.args]
    return []


def _constants(source: str) -> set[str]:
    tree = _parse(source)
    if tree is None:
        return set()
    return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
            if isinstance(t, ast.Name) and t.id.isupper()}


def _strings(tree) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and len(n.value) >= 3]


def _comments(code: str, broken: bool = False) -> str:
    if not broken:
        try:
            return "\n".join(t.string[1:].removeprefix(" ") for t in
                             tokenize.generate_tokens(io.StringIO(textwrap.dedent(code)).readline)
                             if t.type == tokenize.COMMENT)
        except (tokenize.TokenError, IndentationError, SyntaxError):
            pass
    out = []
    for line in code.splitlines():
        at = _comment_start(line)
        if at is not None:
            out.append(line[at + 1:].removeprefix(" "))
    return "\n".join(out)


def _comment_start(line: str):
    quote = None
    for n, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#":
            return n
    return None


def _disguised(text: str) -> bool:
    """Invisible format characters, fullwidth ASCII or look-alike operators: not the curly quotes
    and dashes of ordinary prose."""
    return any(unicodedata.category(c) == "Cf" or 0xFF01 <= ord(c) <= 0xFF5E or c in "\u2212\u00d7\u00f7\u22c5"
               for c in text)


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
