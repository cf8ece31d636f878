"""Does a model's hint give the answer away? Judged on its code once normalised, however it is dressed.

A model that is told not to hand over the solution still does, in every markup there is (fenced
with backticks or tildes, indented, `<pre><code>`, `>>>` prompts, shuffled pieces, comments,
docstrings, strings, inline spans, fullwidth or invisible characters) and with one trivial change
that stops the code running and that a learner undoes in a keystroke: another kernel name, no
decorator, the parameters in another order, the body moved into a helper the kernel calls. So the
guard reads the reply as a learner would copy from it, and judges the code as a learner would fix it:

1. Normalise the text (Unicode NFKC, invisible characters dropped, look-alike operators mapped),
   then pull out every piece of code, whatever its markup, and every Python-parsable line of prose;
   a block in CUDA C (or another brace language) is also taken as the Python it translates to.
2. Normalise the code (`normalise_kernel`): the kernel is the function nothing else calls, whatever
   its name or decorator, and becomes `@cuda.jit def kernel`; parameters named as the puzzle's
   signature go back in its order; helper functions it calls are inlined into it.
3. Read it: each statement becomes tokens with the kernel's parameters by their place in the
   signature, every other local one placeholder (alpha-renaming), and a thread's index
   (`cuda.threadIdx.x`, `cuda.grid(1)`, `cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`) that
   same placeholder, so a renamed variable, an index written out in full or a one-letter typo
   changes a token or two, not the match. Withhold the hint when its whole statements, taken as a
   set (their order and their pieces do not matter), come close to at least half of the solution
   statements the learner has yet to write. Only whole statements count: a fragment (an index, a
   test, a right-hand side, `cache[t]`) is what an honest hint names, and it is shown. Trivial
   statements (guards, `else:`, indices, barriers, headers, initialisations) never count, and nor
   does code already on the learner's screen.
4. Run it: if reading finds nothing, every piece of code that holds a statement (fences, blocks,
   inline spans), pasted into the learner's file the ways a learner would paste it and normalised,
   is judged by the puzzle's checker in the engine's child process (via `passes`), a loop pasted
   in place of the learner's loop among the ways; one that passes
   is withheld. Only modules that pass the static screen's puzzle grammar (`check_puzzle_module`)
   run: a refused module is never run.
"""

from __future__ import annotations

import ast
import copy
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
from collections import Counter
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
AT_LEAST = 2     # and never for one statement, unless only one is left to write
MIN_TOKENS = 5   # a solution statement shorter than this (`stride //= 2`) is too generic to count

MAX_TEXT = 20_000   # characters of a reply read for closeness (a model's hint is far shorter)
MAX_DEPTH = 3       # comments in strings in comments: deep enough for any disguise seen
WINDOW = 24         # words: the longest run of prose tried as one statement
MAX_RUNS = 24       # modules run for one reply (about 0.1 s each in a forked child); past it, withheld
MAX_KERNELS = 3     # functions of one piece tried as its kernel when run
MAX_INLINE = 3      # helpers inlined into helpers inlined into the kernel

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
_INDEX = "idx"  # what a thread's index reads as: a local like any other


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
    left: int              # the solution's non-trivial statements not yet in the learner's file
    total: int             # the solution's non-trivial statements

    @property
    def needed(self) -> int:
        if self.left == 0:
            return 1 << 30  # nothing left to give away by reading (running the code still judges it)
        return max(min(AT_LEAST, self.left), math.ceil(self.left * MOST))

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


def normalise_kernel(code: str, signature: list[str]) -> str | None:
    """The code as the checker would see it once a learner undid the trivial changes that stop it
    running: its kernel (the function nothing else calls, preferably named `kernel`, else decorated
    as one, else taking as many parameters as the signature) named `kernel` and decorated
    `@cuda.jit`, parameters named as the signature's in the signature's order, helpers it calls
    inlined (those that cannot be, early returns say, kept as `@cuda.jit(device=True)` functions),
    functions it never calls dropped. Code without a function is returned as it parses; None when
    it does not parse."""
    tree = _parse(code)
    if tree is None:
        return None
    return ast.unparse(_kernels(tree, signature, prune=True)[0])


class LeakGuard:
    """judge(text) -> a Leak, or None when the hint may be shown whole."""

    def __init__(self, reference: str, starter: str, learner: str, passes: Callable[[str], bool]):
        self.reference, self.starter, self.learner = reference, starter, learner
        self.passes = passes
        self.checks_run = 0
        self.screened_out = 0  # spliced modules the static screen refused to run
        self.signature = _kernel_params(_parse(reference), []) or []
        self._names = _constants(reference) | _constants(starter) | _constants(learner)
        learner_params = _kernel_params(_parse(learner), self.signature) or _kernel_params(_parse(starter),
                                                                                            self.signature)
        self._learner_slots = _slots(learner_params or self.signature, self.signature)
        self._learner_module = normalise_kernel(learner, self.signature)
        self._learner_slip: bool | None = None  # whether the learner's file passes once normalised
        # What is on the learner's screen already: quoting it gives nothing away. As a multiset: a
        # solution with two statements that read alike (`out[lo] = tree[lo]`, `out[hi] = tree[hi]`)
        # still has one left to give away when the learner wrote the other.
        on_screen = []
        for source in (starter, learner):
            tree = _parse(source)
            if tree is not None:
                on_screen += self._read_tree(tree, "")
        self._shown_sources = {f.source for f in on_screen}
        self._shown_statements = Counter(f.whole for f in on_screen)
        ref = _parse(reference) or ast.Module(body=[], type_ignores=[])
        solution = self._read_tree(ref, "", keep_trivial=False)
        self._solution_total = len(solution)
        unmatched = Counter(self._shown_statements)
        self._solution = []
        for form in solution:
            if unmatched[form.whole]:
                unmatched[form.whole] -= 1
            else:
                self._solution.append(form)
        self._left = Counter(f.whole for f in self._solution)

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
        forms = [f for f in self._hint_forms(_pieces(clean)) if not self._on_screen(f)]
        pairs = _match(forms, self._solution)
        return Coverage([forms[h] for h, _ in pairs], len(self._solution), self._solution_total)

    def judge(self, text: str) -> Leak | None:
        covered = self.coverage(text)
        if covered.gives_away:
            return Leak(self._reasons(covered, text), list(dict.fromkeys(f.source for f in covered.matched)))
        return self._run(text)

    # -- the closeness check ---------------------------------------------------------------------
    def _on_screen(self, form: _Form) -> bool:
        """A quote of the learner's own statement, or another like it when the solution has no
        more of those left to write."""
        return form.source in self._shown_sources or (form.whole in self._shown_statements
                                                      and not self._left[form.whole])

    def _read_tree(self, tree, origin: str, keep_trivial: bool = True) -> list[_Form]:
        """The statements of a parsed piece, its kernel normalised, each as canonical tokens."""
        module = _kernels(tree, self.signature)[0]
        params = _own_params(module)
        slots = _slots(params, self.signature) if params else self._learner_slots
        return _forms_of_tree(module, slots, self._names, origin, keep_trivial)

    def _forms_of_code(self, code: str, origin: str, depth: int) -> list[_Form]:
        """Statements of a piece: parsed whole when it parses, else line by line (and by runs of
        words in a line), with what its comments and strings say read as text of their own."""
        out = []
        tree = _parse(code)
        if tree is not None:
            out += self._read_tree(tree, origin)
            hidden = _strings(tree) + [_comments(code)]
        else:
            hidden = [_comments(code, broken=True)]
            for part in _trees(code):
                out += _forms_of_tree(part, self._learner_slots, self._names, origin)
        if depth < MAX_DEPTH:
            for text in hidden:
                if text.strip():
                    out += self._forms_of_text(text, depth + 1)
        return out

    def _forms_of_text(self, text: str, depth: int) -> list[_Form]:
        """A comment or a string, read as a reply of its own (it may hold a whole kernel)."""
        out = []
        for piece in [_Piece(textwrap.dedent(text), "hidden", True), *_pieces(text)]:
            out += self._forms_of_code(piece.code, "hidden", depth)
        return out

    def _hint_forms(self, pieces) -> list[_Form]:
        seen, out = set(), []
        for n, piece in enumerate(pieces):
            for form in self._forms_of_code(piece.code, piece.origin, 0):
                if form.source not in seen:
                    seen.add(form.source)
                    out.append(_Form(form.source, form.whole, form.origin, form.is_expression, n))
        return out

    def _reasons(self, covered: Coverage, text: str) -> list[str]:
        """Every reason, each a sentence without code (they go to the log and the status line)."""
        reasons = [f"its code stands for {len(covered.matched)} of the {covered.left} statements of the solution "
                   "that the learner has yet to write (renamed names, an index written another way and small "
                   "typos still count)"]
        pieces = {f.piece for f in covered.matched}
        if len(pieces) > 1:
            reasons.append(f"it is spread over {len(pieces)} pieces of code, which add up to the solution in any "
                           "order")
        if any(f.origin == "hidden" for f in covered.matched):
            reasons.append("part of it is hidden in comments, docstrings or strings, which a learner can still copy")
        if any(f.origin == "prose" for f in covered.matched):
            reasons.append("part of it is written as plain lines of prose, which a learner can still copy")
        if any(f.origin == "inline" for f in covered.matched):
            reasons.append("part of it is written inline in the sentences, which a learner can still copy")
        if _disguised(text):
            reasons.append("it uses invisible or look-alike characters, which a paste turns back into code")
        return reasons

    # -- the running check -----------------------------------------------------------------------
    def _run(self, text: str) -> Leak | None:
        """Each piece that holds a statement, and the blocks pasted together in whichever order
        makes them work, as modules a learner could end up with, normalised, in the checker."""
        every = _pieces(normalise(text[:MAX_TEXT]))
        pieces = [p for p in every if _runnable_piece(p.code)]
        blocks = list(dict.fromkeys(p.code for p in pieces if p.block))
        candidates = list(blocks)
        if 1 < len(blocks) <= 8:
            orders = itertools.permutations(blocks) if len(blocks) <= 3 else (blocks, blocks[::-1])
            candidates += ["\n".join(textwrap.dedent(p) for p in order) for order in orders]
        # inline spans too: each header (`if i < size:`) with the span after it as its body (a
        # guard may be all they lack), all of them one under the other as a learner would type
        # them, and each span that holds a statement (unless it is on the learner's screen)
        spans = [p.code for p in every if p.origin == "inline"]
        candidates += [f"{head}\n    {body}" for head, body in zip(spans, spans[1:])
                       if head.rstrip().endswith(":") and "\n" not in body and _runnable_piece(f"{head}\n    {body}")]
        candidates += [block for block in _typed_out(spans) if _runnable_piece(block)]
        candidates += [code for code in spans if _runnable_piece(code) and not self._only_shown(code)]
        candidates = list(dict.fromkeys(candidates))
        if candidates and self._learner_slips():
            return None  # their own file passes once normalised: what a piece adds to it proves nothing
        tried = {self._learner_module}
        for piece in candidates:
            for module, undone in self._modules(piece):
                if module in tried:
                    continue
                tried.add(module)
                if not self.runnable(module):
                    continue
                if self.checks_run >= MAX_RUNS:
                    return Leak([f"it holds more code than the guard runs ({MAX_RUNS} ways of pasting it), so it "
                                 "was not shown unchecked"], [])
                self.checks_run += 1
                if self.passes(module):
                    if undone:
                        return Leak(["its code solves the puzzle once a learner undoes a trivial change (the "
                                     "kernel's name or decorator, the order of its parameters, a helper function)"],
                                    [piece])
                    return Leak(["its code, pasted into the learner's file, solves the puzzle"], [piece])
        return None

    def _modules(self, piece: str):
        """(module, whether normalising changed it) for each way of pasting the piece: a piece with
        functions is a kernel of its own first (each function nothing calls tried as the kernel)."""
        tree = _parse(piece)
        if tree is None:
            return
        if not any(isinstance(n, ast.FunctionDef) for n in tree.body):
            for module in splices(piece, self.learner):
                normal = normalise_kernel(module, self.signature)
                if normal is not None:
                    yield normal, False
            return
        plain = ast.dump(tree)
        kept = _kernels(tree, self.signature)[:MAX_KERNELS]  # unpruned: did normalising undo anything?
        for kernel, whole in zip(_kernels(tree, self.signature, prune=True), kept):
            normal = ast.unparse(kernel)
            undone = ast.dump(whole) != plain
            for module in splices(normal, self.learner):
                again = normalise_kernel(module, self.signature)
                if again is not None:
                    yield again, undone

    def _only_shown(self, code: str) -> bool:
        """All the piece says is on the learner's screen: pasting it adds nothing of the hint's."""
        forms = self._forms_of_code(code, "inline", MAX_DEPTH)
        return bool(forms) and all(self._on_screen(f) for f in forms)

    def _learner_slips(self) -> bool:
        """Whether the learner's own file passes once normalised (their one slip is the kernel's
        name, its decorator or its parameters' order): then anything pasted into it would pass,
        and running the hint's code says nothing about the hint. One run, only when normalising
        changed their file."""
        if self._learner_slip is None:
            self._learner_slip = False
            plain = _parse(self.learner)
            module = self._learner_module
            if plain is not None and module is not None and ast.dump(ast.parse(module)) != ast.dump(plain) \
                    and self.runnable(module):
                self.checks_run += 1
                self._learner_slip = bool(self.passes(module))
        return self._learner_slip


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
        setup = _setup_end(learner, parsed)
        if start < setup < end:  # in place of their work, their setup kept (`i = cuda.grid(1)`, a shared array)
            out.append("\n".join(lines[:setup] + block + lines[end:]) + "\n")
        for first, last in _matching_windows(learner, parsed):  # in place of the statements it rewrites
            out.append("\n".join(lines[:first] + block + lines[last:]) + "\n")
    return out


def _kind(statement) -> str:
    """What a statement is, for lining a piece up with the learner's: a loop is a loop however it is
    written (a `while` rewritten as a `for` replaces it), an assignment an assignment."""
    if isinstance(statement, (ast.For, ast.While)):
        return "loop"
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return "assign"
    return type(statement).__name__


def _matching_windows(learner: str, piece, most: int = 3) -> list[tuple[int, int]]:
    """(first line index, end index) of each run of the learner's kernel statements (at the top of
    its body) that the piece's statements line up with, kind by kind, holding a loop or an `if`: the
    statements a learner replaces when a hint says "replace the loop with this"."""
    tree = _parse(learner)
    kernel = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                   and any("jit" in ast.unparse(d) for d in n.decorator_list)), None) if tree else None
    wanted = [_kind(n) for n in piece.body]
    if kernel is None or not wanted or not any(k in ("loop", "If") for k in wanted):
        return []
    body, n = kernel.body, len(wanted)
    out = []
    for i in range(len(body) - n + 1):
        if [_kind(x) for x in body[i:i + n]] == wanted:
            out.append((body[i].lineno - 1, body[i + n - 1].end_lineno))
    return out[:most]


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
    pieces = [p for p in pieces if p.code.strip()]
    # code in CUDA C (or another brace language) translates line by line: its Python is a piece too
    pieces += [_Piece(c, p.origin, p.block) for p in pieces if p.block and _parse(p.code) is None
               for c in [_from_c(p.code)] if c]
    return pieces


_C_TYPE = re.compile(r"^(?:(?:const|unsigned|signed|volatile|__shared__|static)\s+)*"
                     r"(?:int|float|double|long|short|bool|auto|size_t|unsigned|int32_t|float32|var|let)\s+(?=[A-Za-z_])")
_C_FOR = re.compile(r"^for\s*\(\s*(?:[A-Za-z_][\w ]*\s)?\s*(\w+)\s*=\s*([^;]+);\s*\1\s*(<|>|<=|>=)\s*([^;]+);"
                    r"\s*(\+\+\1|\1\+\+|--\1|\1--|\1\s*[-+*/]=\s*[^)]+|\1\s*>>=\s*[^)]+|\1\s*<<=\s*[^)]+)\s*\)\s*(\{?)\s*$")
_C_HEAD = re.compile(r"^(if|while|else\s+if)\s*\((.*)\)\s*(\{?)\s*(.*?)\s*$")
_C_NAMES = [(re.compile(r"(?<![\w.])__syncthreads\s*\(\s*\)"), "cuda.syncthreads()"),
            (re.compile(r"(?<![\w.])__syncwarp\s*\([^)]*\)"), "cuda.syncwarp()"),
            (re.compile(r"(?<![\w.])(threadIdx|blockIdx|blockDim|gridDim)\b"), r"cuda.\1"),
            (re.compile(r"(?<![\w.])atomicAdd\s*\(\s*&\s*(\w+)\s*\[([^\]]*)\]\s*,"), r"cuda.atomic.add(\1, \2,"),
            (re.compile(r"&&"), " and "), (re.compile(r"\|\|"), " or "), (re.compile(r"!(?!=)"), " not "),
            (re.compile(r"(?<![/])/(?![/=])"), "//"), (re.compile(r"/="), "//="),
            (re.compile(r"(\w+)\s*\+\+"), r"\1 += 1"), (re.compile(r"(\w+)\s*--"), r"\1 -= 1"),
            (re.compile(r"\b(\d+)\.?(\d*)f\b"), r"\1.\2"), (re.compile(r"\btrue\b"), "True"),
            (re.compile(r"\bfalse\b"), "False")]


def _c_expr(text: str) -> str:
    for pattern, to in _C_NAMES:
        text = pattern.sub(to, text)
    return _C_TYPE.sub("", text.strip()).strip()


def _from_c(code: str) -> str | None:
    """The Python a learner would write from a piece of brace-language code (CUDA C, C++, Java-ish
    pseudo-code), line by line: types dropped, `while (c) {` as `while c:`, a counted `for` as a
    range, `__syncthreads()` as `cuda.syncthreads()`, integer `/` as `//`. None when it is not
    brace code or does not come out as Python."""
    if not any(ch in code for ch in ";{}"):
        return None
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", code, flags=re.S)
    # one statement or brace a line: split after `;` `{` and around `}` (not inside a for header)
    units: list[str] = []
    for line in text.splitlines():
        depth, cur = 0, ""
        for ch in line:
            depth += ch == "("
            depth -= ch == ")"
            if ch in "{;" and depth == 0:
                units.append(cur + (ch if ch == "{" else ""))
                cur = ""
            elif ch == "}" and depth == 0:
                units += [cur, "}"]
                cur = ""
            else:
                cur += ch
        units.append(cur)
    out: list[str] = []
    indent = 0
    pending = 0  # braceless `if (c) stmt` headers whose single body is on the next unit
    closing: list = []  # per open brace, the statement its end runs (a `for`'s step) or None

    def close():
        nonlocal indent
        step = closing.pop() if closing else None
        if step:
            out.append("    " * indent + step)
        indent = max(0, indent - 1)

    for unit in (u.strip() for u in units):
        if not unit:
            continue
        if unit == "}":
            close()
            continue
        if unit.startswith("}"):
            close()
            unit = unit[1:].strip()
        pad = "    " * (indent + pending)
        m = _C_FOR.match(unit)
        if m:
            var, start, cmp, stop, step, brace = m.groups()
            stop = _c_expr(stop) + (" + 1" if cmp == "<=" else " - 1" if cmp == ">=" else "")
            if "++" in step:
                rng = f"range({_c_expr(start)}, {stop})"
            elif "--" in step:
                rng = f"range({_c_expr(start)}, {stop}, -1)"
            elif "+=" in step or "-=" in step:
                by = _c_expr(step.split("=", 1)[1])
                rng = f"range({_c_expr(start)}, {stop}, {'-' if '-=' in step else ''}{by})"
            else:  # `s >>= 1`: a while loop, its step at the end of the body
                out.append(f"{pad}{var} = {_c_expr(start)}")
                out.append(f"{pad}while {var} {cmp} {_c_expr(m.group(4))}:")
                if not brace:
                    return None
                indent, pending = indent + pending + 1, 0
                closing.append(_c_expr(step))
                continue
            out.append(f"{pad}for {var} in {rng}:")
            if brace:
                indent, pending = indent + pending + 1, 0
                closing.append(None)
            else:
                pending += 1
            continue
        if unit in ("else", "else {"):
            out.append(f"{'    ' * indent}else:")
            if unit.endswith("{"):
                indent += 1
                closing.append(None)
            else:
                pending += 1
            continue
        m = _C_HEAD.match(unit)
        if m:
            word, cond, brace, rest = m.groups()
            word = "elif" if word.startswith("else") else word
            out.append(f"{'    ' * (indent + pending)}{word} {_c_expr(cond)}:")
            if brace:
                indent, pending = indent + pending + 1, 0
                closing.append(None)
            elif rest:
                out.append(f"{'    ' * (indent + 1)}{_c_expr(rest)}")
            else:
                pending += 1
            continue
        out.append(f"{pad}{_c_expr(unit)}")
        pending = 0
    python = "\n".join(out)
    return python if _parse(python) is not None else None


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


def _typed_out(spans: list[str]) -> list[str]:
    """One-line spans typed one under the other. Where a header (`for ...:`, `if ...:`) ends, the
    spans do not say: so twice, each header's body the one span after it, and every span after
    it; `else:` and `elif` go back to their `if`."""
    lines = [s.strip() for s in spans if s.strip() and "\n" not in s]
    if len(lines) < 2:
        return []
    out = []
    for to_the_end in (False, True):
        block, depth, ifs = [], 0, []
        for line in lines:
            if re.match(r"(?:else|elif\b.*):$", line) and ifs:
                depth = ifs.pop()
            block.append("    " * depth + line)
            if line.endswith(":"):
                if line.startswith("if "):
                    ifs.append(depth)
                depth += 1
            elif not to_the_end:
                depth = 0
        out.append("\n".join(block))
    return list(dict.fromkeys(out))


def _runnable_piece(code: str) -> bool:
    """A piece worth running holds a statement: not only expressions (fragments) and barriers."""
    tree = _parse(code)
    if tree is None:
        return False
    return any(not isinstance(n, ast.Expr) or (isinstance(n.value, ast.Call) and n.value.args) for n in tree.body)


# -- statements as canonical tokens ----------------------------------------------------------------

@dataclass(frozen=True)
class _Form:
    source: str                # the statement as written (normalised), for the re-ask
    whole: tuple               # its canonical tokens
    origin: str
    is_expression: bool = False  # an expression statement: it stands only for one of the solution's
    piece: int = 0             # which piece of the reply it came from


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


def _forms_of_tree(tree, slots, names, origin: str = "", keep_trivial: bool = True) -> list[_Form]:
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        if not keep_trivial and _trivial(node):
            continue
        form = _form(node, slots, names, origin)
        if form is None or (not keep_trivial and len(form.whole) < MIN_TOKENS):
            continue
        out.append(form)
    return out


def _form(node, slots, names, origin):
    """The statement's canonical tokens (a compound statement's header only), its thread indices
    read as one more local."""
    if isinstance(node, (ast.If, ast.While)):
        word = "if" if isinstance(node, ast.If) else "while"
        source = f"{word} {ast.unparse(node.test)}:"
        shape = f"{word} {ast.unparse(_blind(node.test))}:"
    elif isinstance(node, ast.For):
        source = f"for {ast.unparse(node.target)} in {ast.unparse(node.iter)}:"
        shape = f"for {ast.unparse(_blind(node.target))} in {ast.unparse(_blind(node.iter))}:"
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With)):
        return None
    elif isinstance(node, ast.AugAssign):
        source = ast.unparse(node)
        shape = ast.unparse(ast.Assign(targets=[_blind(node.target)], lineno=0,
                                       value=_blind(ast.BinOp(node.target, node.op, node.value))))
    else:
        source = ast.unparse(node)
        shape = ast.unparse(_blind(node))
    return _Form(source, _tokens(shape, slots, names), origin, isinstance(node, ast.Expr))


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
    if _thread_index(expr):
        return True
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


def _tokens(source: str, slots: dict, names) -> tuple:
    """Canonical tokens: the kernel's parameters by their place in the signature, the puzzle's
    constants and the CUDA API as themselves, every other name one placeholder, numbers by value."""
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
            elif name in slots:
                out.append(f"P{slots[name]}")
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
    """How closely a hint statement stands for a solution statement, whole: an expression (a
    right-hand side, a test, an index) stands only for an expression statement, a call."""
    if form.is_expression != ref.is_expression:
        return 0.0
    return _close(form.whole, ref.whole)


def _close(a: tuple, b: tuple) -> float:
    if not a or not b:
        return 0.0
    if max(len(a), len(b)) < EXACT_BELOW:
        return float(a == b)
    same = sum(block.size for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return same / max(len(a), len(b))


# -- the normal form of a piece's kernel -----------------------------------------------------------

def _kernels(tree, signature, prune: bool = False) -> list[ast.Module]:
    """The module normalised once for each function that could be its kernel, likeliest first
    (the module itself, copied, when it has no function). `prune`: drop the functions the kernel
    never calls (for running; reading keeps them, since code there is still copyable)."""
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not defs:
        return [copy.deepcopy(tree)]
    latest = {d.name: d for d in defs}  # later definitions win
    called = {n.func.id for d in latest.values() for n in ast.walk(d)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id != d.name}
    roots = [d for d in latest.values() if d.name not in called] or list(latest.values())
    order = list(latest.values())
    roots.sort(key=lambda d: (d.name == "kernel", _jit_kernel(d), len(d.args.args) == len(signature),
                              order.index(d)), reverse=True)
    return [_normalised(tree, root.name, signature, prune) for root in roots]


def _normalised(tree, kernel_name: str, signature, prune: bool) -> ast.Module:
    tree = copy.deepcopy(tree)
    latest = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    tree.body = [n for n in tree.body if not isinstance(n, ast.FunctionDef) or latest[n.name] is n]
    kernel = latest[kernel_name]
    if kernel_name != "kernel" and "kernel" in latest:  # a helper was called `kernel`: it gives up the name
        latest["kernel_helper"] = latest.pop("kernel")
        latest["kernel_helper"].name = "kernel_helper"
        renaming = _Rename({"kernel": ast.Name("kernel_helper", ast.Load())})
        for d in latest.values():
            renaming.visit(d)
    helpers = {name: d for name, d in latest.items() if d is not kernel}
    kernel.name = "kernel"
    if not _jit_kernel(kernel):
        kernel.decorator_list = [_expr("cuda.jit")]
    names = [a.arg for a in kernel.args.args]
    if sorted(names) == sorted(signature) and names != list(signature):
        by_name = {a.arg: a for a in kernel.args.args}
        kernel.args.args = [by_name[n] for n in signature]
    kernel.body = _Inliner(helpers).block(kernel.body, tail=True, depth=0)
    reached = _reached(kernel, helpers)
    if prune:
        tree.body = [n for n in tree.body if not isinstance(n, ast.FunctionDef) or n is kernel or n.name in reached]
    for name in reached:
        if not any(_jit(d) for d in helpers[name].decorator_list):
            helpers[name].decorator_list = [_expr("cuda.jit(device=True)")]
    return ast.fix_missing_locations(tree)


class _Inliner:
    """Helper calls in a kernel's body replaced by the helper's body: each parameter bound to its
    argument (renamed to it when the argument is a name or a constant the helper never assigns,
    else a fresh local set first), each of the helper's own locals made fresh. A call as a whole
    statement, or as the one value of `x = helper(...)` when the helper's only return ends it; a
    helper with any other return is inlined only as the kernel's last statement, its returns
    bare. Whatever cannot be inlined stays a call."""

    def __init__(self, helpers: dict):
        self.helpers = helpers
        self.count = 0

    def block(self, statements: list, tail: bool, depth: int) -> list:
        out = []
        for n, statement in enumerate(statements):
            inlined = self._inlined(statement, tail and n == len(statements) - 1, depth)
            if inlined is not None:
                out += inlined
                continue
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for name in ("body", "orelse", "finalbody"):
                    inner = getattr(statement, name, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        setattr(statement, name, self.block(inner, False, depth))
            out.append(statement)
        return out

    def _inlined(self, statement, at_end: bool, depth: int):
        call, target = None, None
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call = statement.value
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.value, ast.Call):
            call, target = statement.value, statement.targets[0]
        if call is None or depth >= MAX_INLINE or not isinstance(call.func, ast.Name):
            return None
        helper = self.helpers.get(call.func.id)
        bound = _bind(helper, call) if helper is not None else None
        if bound is None:
            return None
        body = copy.deepcopy(helper.body)
        if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # a docstring
        if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Global,
                              ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Try)) for s in body for n in ast.walk(s)):
            return None
        returns = [n for s in body for n in ast.walk(s) if isinstance(n, ast.Return)]
        last = body[-1]
        if target is not None:
            if not (isinstance(last, ast.Return) and last.value is not None and len(returns) == 1):
                return None
            body[-1] = ast.Assign(targets=[target], value=last.value, lineno=0)
        elif isinstance(last, ast.Return) and len(returns) == 1:
            body = body[:-1] + ([ast.Expr(last.value)] if isinstance(last.value, ast.Call) else [])
        elif returns:
            if not at_end:
                return None
            for r in returns:
                r.value = None
        stored = {n.id for s in body for n in ast.walk(s)
                  if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        self.count += 1
        rename, prelude = {}, []
        for param, arg in bound.items():
            if param not in stored and isinstance(arg, (ast.Name, ast.Constant)):
                rename[param] = arg
            else:
                rename[param] = ast.Name(f"{param}_{self.count}", ast.Load())
                prelude.append(ast.Assign(targets=[ast.Name(f"{param}_{self.count}", ast.Store())],
                                          value=copy.deepcopy(arg), lineno=0))
        for name in stored - set(bound):
            rename[name] = ast.Name(f"{name}_{self.count}", ast.Load())
        body = [_Rename(rename).visit(s) for s in body]
        return prelude + (self.block(body, at_end, depth + 1) or [ast.Pass()])


def _bind(helper, call) -> dict | None:
    """The helper's parameters bound to the call's arguments, or None when they do not line up."""
    args = helper.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        return None
    params = [a.arg for a in args.args]
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) + len(call.keywords) != len(params):
        return None
    bound = dict(zip(params, call.args))
    for keyword_arg in call.keywords:
        if keyword_arg.arg not in params or keyword_arg.arg in bound:
            return None
        bound[keyword_arg.arg] = keyword_arg.value
    return bound


class _Rename(ast.NodeTransformer):
    def __init__(self, rename: dict):
        self.rename = rename

    def visit_Name(self, node):
        new = self.rename.get(node.id)
        if new is None:
            return node
        if isinstance(new, ast.Name):
            return ast.copy_location(ast.Name(new.id, node.ctx), node)
        return ast.copy_location(copy.deepcopy(new), node)  # a constant, only ever read


def _reached(kernel, helpers: dict) -> set[str]:
    """The helpers the kernel still calls, directly or through one another."""
    reached, todo = set(), [kernel]
    while todo:
        for n in ast.walk(todo.pop()):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in helpers \
                    and n.func.id not in reached:
                reached.add(n.func.id)
                todo.append(helpers[n.func.id])
    return reached


def _jit(decorator) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    text = ast.unparse(target)
    return text == "jit" or text.endswith("cuda.jit")


def _jit_kernel(function) -> bool:
    """Decorated as a kernel: a cuda.jit without device=True."""
    for d in function.decorator_list:
        if _jit(d):
            options = d.keywords if isinstance(d, ast.Call) else []
            return not any(k.arg == "device" and not (isinstance(k.value, ast.Constant) and not k.value.value)
                           for k in options)
    return False


def _expr(source: str):
    return ast.parse(source, mode="eval").body


def _slots(params: list[str], signature: list[str]) -> dict:
    """Each parameter's place: a name of the signature keeps its own wherever the kernel lists it
    (a swapped order changes nothing), any other takes its position if free (a renamed one)."""
    slots = {p: signature.index(p) for p in params if p in signature}
    free = [k for k in range(max(len(signature), len(params))) if k not in slots.values()]
    for position, p in enumerate(params):
        if p not in slots:
            slots[p] = position if position in free else free[0]
            free.remove(slots[p])
    for k, name in enumerate(signature):  # a hint may name the signature's parameter the learner renamed
        if name not in slots and k not in slots.values():
            slots[name] = k
    return slots


def _blind(node):
    """A copy with every thread index (`cuda.threadIdx.x`, `cuda.grid(1)`, `cuda.grid(2)[0]`,
    `cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x` in any order) read as one local: in a
    statement it is the same index as the local the reference keeps it in."""
    return _Blind().visit(copy.deepcopy(node))


class _Blind(ast.NodeTransformer):
    def visit(self, node):
        if isinstance(node, ast.expr) and _thread_index(node):
            return ast.copy_location(ast.Name(_INDEX, ast.Load()), node)
        node = self.generic_visit(node)
        # a shift by a constant is the multiplication or floor division it stands for: `s >>= 1`
        # halves `s` as `s //= 2` does
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.RShift, ast.LShift)) and \
                isinstance(node.right, ast.Constant) and type(node.right.value) is int and 0 <= node.right.value < 31:
            op = ast.FloorDiv() if isinstance(node.op, ast.RShift) else ast.Mult()
            return ast.copy_location(ast.BinOp(node.left, op, ast.Constant(1 << node.right.value)), node)
        return node


def _thread_index(expr) -> bool:
    if _axis(expr, "threadIdx"):
        return True
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Call) and ast.unparse(expr.func) == "cuda.grid":
        return True
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        for thread, block in ((expr.left, expr.right), (expr.right, expr.left)):
            axis = _axis(thread, "threadIdx")
            if axis and isinstance(block, ast.BinOp) and isinstance(block.op, ast.Mult):
                pairs = {(_axis(block.left, "blockIdx"), _axis(block.right, "blockDim")),
                         (_axis(block.right, "blockIdx"), _axis(block.left, "blockDim"))}
                if (axis, axis) in pairs:
                    return True
    return False


def _axis(expr, what: str) -> str | None:
    """'x', 'y' or 'z' when the expression is `cuda.<what>.<axis>`."""
    if isinstance(expr, ast.Attribute) and expr.attr in ("x", "y", "z") and isinstance(expr.value, ast.Attribute) \
            and expr.value.attr == what and isinstance(expr.value.value, ast.Name) and expr.value.value.id == "cuda":
        return expr.attr
    return None


# -- small readers ---------------------------------------------------------------------------------

def _parse(code: str):
    try:
        return ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _kernel_params(tree, signature) -> list[str]:
    """The parameters of the module's kernel, once normalised; [] without a function."""
    return [] if tree is None else _own_params(_kernels(tree, signature)[0])


def _own_params(module) -> list[str]:
    """The parameters of a normalised module's `kernel`."""
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == "kernel":
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


def _setup_end(source: str, piece) -> int:
    """The line index after the leading assignments of the learner's kernel to names that the
    piece never assigns (their index, their shared array): the setup a piece of the body relies on."""
    tree = _parse(source)
    kernel = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                   and any("jit" in ast.unparse(d) for d in n.decorator_list)), None) if tree else None
    if kernel is None:
        return 0
    redone = {n.id for n in ast.walk(piece) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    end = 0
    for statement in kernel.body:
        if not isinstance(statement, ast.Assign) or \
                not all(isinstance(n, (ast.Name, ast.Tuple)) for n in statement.targets):
            break
        assigned = {n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if assigned & redone:
            break
        end = statement.end_lineno
    return end


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
