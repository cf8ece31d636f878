"""The leak guard's suite: give-aways in every disguise a model has used, and honest hints beside them.

Every give-away is generated from a real puzzle's reference, so each one hands over that puzzle's
solution (pasted, or fixed in a keystroke: a typo, a fullwidth plus, an invisible space, a name
put back). The honest hints are what a good coach writes: nudges in words that may quote a guard,
an `else:`, a loop header, a barrier, one line or one expression, the starter or the learner's own
code. The tests (tests/ai/test_leak_suite.py) and the figures (bench/leakguard.py) share this
module, so the figure is the test's own count.
"""

from __future__ import annotations

import ast
import html
import re
import textwrap
from dataclasses import dataclass

# Puzzles with several statements, shared memory and barriers: a load with a zero fill, a window,
# a reduction by one thread, a tree reduction, a halo, a tiled matrix multiply, a tiled transpose
# (no `else:` in it at all).
PUZZLES = ("shared", "pooling", "dot", "conv1d", "prefix_sum", "matmul_tiled", "transpose")


@dataclass(frozen=True)
class Case:
    puzzle: str
    form: str
    text: str      # the model's whole reply
    learner: str   # the learner's file when the hint was asked for
    leak: bool     # True: the guard must withhold it; False: it must show it


def leak_cases(catalog) -> list[Case]:
    return [Case(pid, form, make(Solution(catalog.get(pid))), catalog.get(pid).starter, True)
            for pid in PUZZLES for form, make in LEAK_FORMS.items()]


def honest_cases(catalog) -> list[Case]:
    """The honest forms on the suite's puzzles, and every authored hint of every puzzle (written by
    people to teach without giving the answer; the content check holds them to it)."""
    out = [Case(pid, "an authored hint", hint, catalog.get(pid).starter, False)
           for pid in catalog.ids() for hint in catalog.get(pid).hints]
    for pid in PUZZLES:
        sol = Solution(catalog.get(pid))
        for form, make in HONEST_FORMS.items():
            made = make(sol)
            text, learner = made if isinstance(made, tuple) else (made, sol.puzzle.starter)
            out.append(Case(pid, form, text, learner, False))
    return out


class Solution:
    """What the generators need to know about one puzzle's reference, read from its source."""

    def __init__(self, puzzle):
        self.puzzle = puzzle
        self.module = ast.unparse(ast.parse(puzzle.reference))  # the whole file, comments dropped
        ref_fn, starter_fn = _kernel(puzzle.reference), _kernel(puzzle.starter)
        given = {ast.unparse(s) for s in starter_fn.body}
        n = 0
        while n < len(ref_fn.body) and ast.unparse(ref_fn.body[n]) in given:
            n += 1
        self.new = ref_fn.body[n:]              # what the learner must write
        self.body = "\n".join(ast.unparse(s) for s in self.new).splitlines()
        self.params = [a.arg for a in ref_fn.args.args]
        self.signature = f"def kernel({', '.join(self.params)}):"
        self.header = self.module[: self.module.index("@cuda.jit")]
        self.starter_lines = [ast.unparse(s) for s in starter_fn.body if not isinstance(s, ast.Pass)]
        walked = [node for s in self.new for node in ast.walk(s)]
        self.guard = next(f"if {ast.unparse(n.test)}:" for n in walked
                          if isinstance(n, ast.If) and isinstance(n.test, (ast.Compare, ast.BoolOp)))
        size = next(iter(puzzle.constants), "TPB")
        self.loop = next((_header(n) for n in walked if isinstance(n, (ast.For, ast.While))),
                         f"for k in range({size}):")
        self.assignments = [n for n in walked if isinstance(n, (ast.Assign, ast.AugAssign))]
        self.stores = [ast.unparse(n) for n in self.assignments
                       if not isinstance(n.value, ast.Constant) and isinstance(_target(n), ast.Subscript)]
        self.product = next((ast.unparse(n.value) for n in self.assignments if isinstance(n.value, ast.BinOp)),
                            ast.unparse(self.assignments[0].value))
        self.shared = next((s.targets[0].id for s in starter_fn.body + ref_fn.body
                            if isinstance(s, ast.Assign) and "shared.array" in ast.unparse(s.value)), "shared")
        self.index = next(line for line in self.starter_lines + self.body if "cuda.grid" in line or "threadIdx" in line)
        self.local = _most_used_local(self.new, self.params)
        self.locals = sorted({n.id for n in ast.walk(ref_fn) if isinstance(n, ast.Name)
                              and isinstance(n.ctx, ast.Store)} - set(self.params))

    def kernel(self) -> str:
        return self.module + "\n"

    def chunks(self, n: int) -> list[str]:
        """The body's lines cut into n runs in order, each with the indentation it had."""
        lines, out, start = self.body, [], 0
        for k in range(n):
            end = start + (len(lines) - start) // (n - k)
            out.append("\n".join(lines[start:end]))
            start = end
        return [c for c in out if c.strip()]

    def right_hand_sides(self) -> list[str]:
        sides = [ast.unparse(n.value) for n in self.assignments]
        sides += [ast.unparse(n.iter) for s in self.new for n in ast.walk(s) if isinstance(n, ast.For)]
        return list(dict.fromkeys(sides))


def _kernel(source: str) -> ast.FunctionDef:
    return next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef))


def _header(node) -> str:
    if isinstance(node, ast.For):
        return f"for {ast.unparse(node.target)} in {ast.unparse(node.iter)}:"
    return f"while {ast.unparse(node.test)}:"


def _target(node):
    return node.targets[0] if isinstance(node, ast.Assign) else node.target


def _most_used_local(statements, params) -> str:
    counts: dict[str, int] = {}
    for s in statements:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and n.id not in params and n.id not in ("cuda", "numba", "range") \
                    and not n.id.isupper():
                counts[n.id] = counts.get(n.id, 0) + 1
    return max(counts, key=counts.get)


def _rename(code: str, old: str, new: str) -> str:
    return re.sub(rf"\b{re.escape(old)}\b", new, code)


def _fence(code: str, info: str = "python", mark: str = "```") -> str:
    return f"{mark}{info}\n{code.rstrip()}\n{mark}"


# -- the give-aways ---------------------------------------------------------------------------------

def _fenced(s):
    return "Here is the whole kernel:\n\n" + _fence(s.kernel()) + "\n\nRead it line by line."


def _indented(s):
    return ("Here is a kernel that works:\n\n" + textwrap.indent(s.kernel(), "    ")
            + "\n\nEach thread loads its element, waits at the barrier, then combines.")


def _tilde(s):
    return "The kernel:\n\n" + _fence(s.kernel(), "python", "~~~") + "\n"


def _four_pieces_renamed(s):
    new = "buf" if s.local != "buf" else "tmp"
    words = ("First,", "Then,", "After that,", "Finally,")
    return "\n\n".join(f"{w}\n{_fence(_rename(c, s.local, new))}" for w, c in zip(words, s.chunks(4)))


def _typo(s):
    return ("Almost there; compare with this:\n\n"
            + _fence(s.kernel().replace("cuda.syncthreads()", "cuda.syncthread()", 1)))


def _typo_all_renamed(s):
    kernel = s.kernel().replace("cuda.syncthreads()", "cuda.syncthread()", 1)
    for n, name in enumerate(s.locals):
        kernel = _rename(kernel, name, f"v{n}")
    return "Same idea, my names:\n\n" + _fence(kernel)


def _pre_code(s):
    return "Like this:\n<pre><code>" + html.escape(s.kernel()) + "</code></pre>\nNow try it."


def _prompts(s):
    lines = []
    for stmt in s.new:
        for n, line in enumerate(ast.unparse(stmt).splitlines()):
            lines.append((">>> " if n == 0 else "... ") + line)
    return "Try these in order:\n\n" + "\n".join(lines) + "\n\nand you are done."


def _comments(s):
    body = "\n".join(f"    # {line}" for line in s.body)
    return ("Fill in your kernel following the comments:\n\n"
            + _fence(f"{s.header}@cuda.jit\n{s.signature}\n{body}\n    pass"))


def _docstring(s):
    body = textwrap.indent("\n".join(s.body), "    ")
    return "Here is the plan, as a docstring:\n\n" + _fence(
        f'{s.header}@cuda.jit\n{s.signature}\n    """What to write:\n\n{body}\n    """\n    pass')


def _string(s):
    return "Keep this for later:\n\n" + _fence(f"ANSWER = {chr(10).join(s.body)!r}")


def _fullwidth_plus(s):
    return "The kernel:\n\n" + _fence(s.kernel().replace("+", "\uff0b"))


def _zero_width(s):
    hidden = s.kernel().replace("=", "=\u200b").replace("[", "[\u200b").replace("cuda.", "cu\u200bda.")
    return "The kernel:\n\n" + _fence(hidden)


def _five_shuffled(s):
    chunks = s.chunks(5)
    order = [3, 0, 4, 1, 2][: len(chunks)] if len(chunks) == 5 else list(reversed(range(len(chunks))))
    return "\n\n".join(f"Piece {n + 1}:\n{_fence(chunks[k])}" for n, k in enumerate(order))


def _plain_lines(s):
    return ("Write these lines in your kernel:\n" + "\n".join(line.strip() for line in s.body)
            + "\nThat is all it takes.")


def _inline_spans(s):
    return "Write " + ", then ".join(f"`{line.strip()}`" for line in s.body) + "."


def _blockquote(s):
    return "As the reference puts it:\n\n" + "\n".join(f"> {line}" for line in _fence(s.kernel()).splitlines())


LEAK_FORMS = {
    "```python fence": _fenced,
    "4-space indented block": _indented,
    "~~~ fence": _tilde,
    "4 fences, a name renamed": _four_pieces_renamed,
    "one-letter typo": _typo,
    "typo, every local renamed": _typo_all_renamed,
    "<pre><code>": _pre_code,
    ">>> prompts": _prompts,
    "in comments": _comments,
    "in a docstring": _docstring,
    "in a string": _string,
    "fullwidth \uff0b": _fullwidth_plus,
    "zero-width spaces": _zero_width,
    "5 shuffled fences": _five_shuffled,
    "lines in prose": _plain_lines,
    "inline spans": _inline_spans,
    "blockquoted fence": _blockquote,
}


# -- the honest hints ---------------------------------------------------------------------------------

def _nudge(s):
    return (f"Which of your threads have no element of `{s.params[1]}` to work on, and what should each of them "
            f"leave in its slot of `{s.shared}` so that nobody later reads garbage?")


def _guard_inline(s):
    return (f"Threads past the end must not read memory: a guard such as `{s.guard}` around the load does that. "
            "What do those threads do instead?")


def _else(s):
    return "Your load has no `else:` branch. Which threads take it, and what do they store there?"


def _barrier(s):
    return (f"Every thread must reach `cuda.syncthreads()`, so it cannot sit inside `{s.guard}`. Where does it "
            f"go, between writing `{s.shared}` and reading it?")


def _guard_fence(s):
    return f"Start from the guard:\n\n{_fence(s.guard)}\n\nand think about what the threads outside it still do."


def _skeleton(s):
    return ("The shape, without the work:\n\n" + _fence(f"{s.guard}\n    ...  # your element\nelse:\n"
                                                        "    ...  # and here?\ncuda.syncthreads()")
            + "\n\nFill in the dots yourself.")


def _loop(s):
    return (f"After the barrier a thread can walk over the values it needs with a loop like `{s.loop}`, "
            "keeping a running total in a local variable rather than in global memory.")


def _starter_quote(s):
    return (f"Your line `{s.starter_lines[0]}` already gives the block its shared memory; now each thread "
            "should fill its own part of it.")


def _index_quote(s):
    return f"`{s.index}` is this thread's index: use it to pick the element it owns and the cell it writes."


def _steps(s):
    return ("1. Work out which element is yours.\n2. If it is inside the input, copy it into your slot; "
            "otherwise store zero.\n3. Wait at the barrier, outside every branch.\n4. Only then read the "
            "slots you need, combine them and write your output once.")


def _one_line(s):
    return f"For instance, one of the stores is `{s.stores[0]}`; the rest is yours to write."


def _one_expression(s):
    return f"Each thread's share of the work is `{s.product}`. Where must it go so the others can see it?"


def _failure(s):
    return (f"The checker says thread (3,) of block (0,) reads `{s.shared}[3]` on line 12 before thread 3 wrote "
            "it, both in barrier phase 0. What has to happen between the write and the read?")


def _starter_fence(s):
    quoted = s.puzzle.starter.replace("    pass", "    # what goes here? which threads, and when?")
    return "Your file so far:\n\n" + _fence(quoted) + "\n\nStart with the load."


def _html_guard(s):
    return (f"Wrap the load in <code>{html.escape(s.guard)}</code> and give the other threads an "
            "<code>else:</code> of their own.")


def _prompt_fragment(s):
    return (f"In the simulator:\n\n>>> {s.index}\n\ngives the thread's place; which cell of `{s.shared}` "
            "is its own?")


def _indented_prose(s):
    return ("1. Load.\n\n    Each thread copies its own element into its own slot.\n    Threads past the end "
            "write zero there.\n\n2. Wait.\n\n    Nobody reads a slot before every thread has written its own.")


def _learners_own_lines(s):
    """Their file has every step but the barrier: quoting two of their own lines gives nothing."""
    learner = s.puzzle.reference.replace("cuda.syncthreads()", "pass")
    a, b = s.stores[0], s.stores[-1]
    return (f"Your lines `{a}` and `{b}` are right. But nothing stops a thread from reading `{s.shared}` "
            "before the others have written it: what is missing between them?", learner)


def _learners_unguarded_line(s):
    """Their file has one store, unguarded: the hint quotes it and names the guard it needs."""
    learner = s.puzzle.starter.replace("    pass", f"    {s.stores[0]}")
    return (f"Your line `{s.stores[0]}` also runs in the threads past the end of the input. Which guard, "
            f"like `{s.guard}`, keeps them out, and what do they store instead?", learner)


def _right_hand_sides(s):
    """Every value the solution computes, no statement: fragments, which the learner still has to
    put in place (targets, guards, loops, barriers). Withheld until the issue "Scores and hints
    that mean what they say" (part 4) ruled that a hint naming fragments and no whole statement
    is shown."""
    return ("The values each step computes, in order:\n\n"
            + "\n".join(f"- `{side}`" for side in s.right_hand_sides()) + "\n\nPut each where it belongs.")


def _words_only(s):
    return ("Think of the block as a team: first everyone puts their value on the shared table, then everyone "
            "waits until the table is full, and only then does anyone read from it. Which of those three steps "
            "does your kernel skip?")


HONEST_FORMS = {
    "a nudge in words": _nudge,
    "a guard inline": _guard_inline,
    "else: inline": _else,
    "the barrier inline": _barrier,
    "a guard line fenced": _guard_fence,
    "a skeleton of ...": _skeleton,
    "a loop header": _loop,
    "the starter quoted": _starter_quote,
    "the index line": _index_quote,
    "steps in words": _steps,
    "one line of the solution": _one_line,
    "one expression": _one_expression,
    "the failure retold": _failure,
    "the starter fenced": _starter_fence,
    "<code> guard": _html_guard,
    ">>> one line": _prompt_fragment,
    "indented prose": _indented_prose,
    "the learner's own lines": _learners_own_lines,
    "the learner's unguarded line": _learners_unguarded_line,
    "a story in words": _words_only,
    "every right-hand side (fragments)": _right_hand_sides,
}
