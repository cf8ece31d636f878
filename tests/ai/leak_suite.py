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
import copy
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
    state: str = "the starter"  # what the learner's file holds


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


# -- disguises a learner undoes in a keystroke, and fragments an honest coach names ---------------
# Part 4 of the issue "Scores and hints that mean what they say": the reference with one trivial
# change that stops it running (or a few at once), generated for every puzzle and judged against
# three learner files: the starter, the reference without its barriers (nothing left to write but
# trivial lines, so only running the normalised code can tell) and the reference without its last
# statement (one statement left). Against them, fragment hints written by hand: an index, a test, a
# right-hand side, a barrier, never a whole statement.

def disguise_cases(catalog, puzzles=None) -> list[Case]:
    out = []
    for pid in puzzles or catalog.ids():
        puzzle = catalog.get(pid)
        for state, learner in learner_states(puzzle):
            for form, make in DISGUISES.items():
                if form in LINE_BY_LINE and state == "all but the barriers":
                    continue  # see LINE_BY_LINE
                out.append(Case(pid, form, make(puzzle.reference), learner, True, state))
    return out


def fragment_cases(catalog, puzzles=None) -> list[Case]:
    out = []
    for pid in puzzles or catalog.ids():
        puzzle = catalog.get(pid)
        states = dict(learner_states(puzzle))
        for text in FRAGMENT_HINTS.get(pid, ()):
            out.append(Case(pid, "fragments, no statement", text, puzzle.starter, False))
        for text in BARRIER_HINTS.get(pid, ()):
            out.append(Case(pid, "fragments, to a learner missing the barrier", text, states["all but the barriers"],
                            False, "all but the barriers"))
    return out


def learner_states(puzzle) -> list[tuple[str, str]]:
    states = [("the starter", puzzle.starter)]
    if "cuda.syncthreads()" in puzzle.reference:
        states.append(("all but the barriers", puzzle.reference.replace("cuda.syncthreads()", "pass")))
    tree = ast.parse(puzzle.reference)
    kernel = _kernel_of(tree)
    given = [s for s in _kernel_of(ast.parse(puzzle.starter)).body if not isinstance(s, ast.Pass)]
    if len(kernel.body) > len(given) + 1:
        kernel.body = kernel.body[:-1]
        states.append(("all but the last statement", ast.unparse(tree) + "\n"))
    return states


def _kernel_of(tree) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "kernel")


def _shown(code: str) -> str:
    return f"Compare yours with this:\n\n{_fence(code)}\n\nThe difference is small."


def _another_name(reference):
    tree = ast.parse(reference)
    _kernel_of(tree).name = "solution_kernel"
    return _shown(ast.unparse(tree))


def _undecorated(reference):
    tree = ast.parse(reference)
    _kernel_of(tree).decorator_list = []
    return _shown(ast.unparse(tree))


def _swapped(reference):
    tree = ast.parse(reference)
    params = _kernel_of(tree).args.args
    params[0], params[1] = params[1], params[0]
    return _shown(ast.unparse(tree))


def _in_a_helper(reference, decorated=True, own_names=False):
    """The kernel's body moved into a function the kernel calls, with the kernel's parameters (or
    names of its own); decorated as a device function it runs as it is."""
    tree = ast.parse(reference)
    kernel = _kernel_of(tree)
    params = [a.arg for a in kernel.args.args]
    names = [f"p{n}" for n in range(len(params))] if own_names else params
    body = kernel.body
    if own_names:
        body = [_renamed(s, dict(zip(params, names))) for s in body]
    decorator = "@cuda.jit(device=True)\n" if decorated else ""
    helper = ast.parse(f"{decorator}def body_of_kernel({', '.join(names)}):\n    pass").body[0]
    helper.body, kernel.body = body, ast.parse(f"body_of_kernel({', '.join(params)})").body
    tree.body.insert(tree.body.index(kernel), helper)
    return _shown(ast.unparse(tree))


def _locals_renamed(reference):
    tree = ast.parse(reference)
    kernel = _kernel_of(tree)
    params = {a.arg for a in kernel.args.args}
    stored = sorted({n.id for n in ast.walk(kernel) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                    - params)
    kernel.body = [_renamed(s, {name: f"v{n}" for n, name in enumerate(stored)}) for s in kernel.body]
    return _shown(ast.unparse(tree))


def _everything_at_once(reference):
    """Another name, no decorator, the parameters swapped, every local renamed."""
    tree = ast.parse(_unfenced(_locals_renamed(reference)))
    kernel = _kernel_of(tree)
    kernel.name, kernel.decorator_list = "my_kernel", []
    kernel.args.args[0], kernel.args.args[1] = kernel.args.args[1], kernel.args.args[0]
    return _shown(ast.unparse(tree))


def _index_inline(reference):
    """The body's statements in inline spans, each local that only holds a thread's index replaced
    by the index written out (`out[cuda.threadIdx.x] = a[cuda.threadIdx.x] + 10`)."""
    kernel = _kernel_of(ast.parse(reference))
    stores = [n.id for n in ast.walk(kernel) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    index, body = {}, []
    for s in kernel.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            target, value = s.targets[0], ast.unparse(s.value)
            if isinstance(target, ast.Name) and value in _INDICES and stores.count(target.id) == 1:
                index[target.id] = ast.parse(value, mode="eval").body
                continue
            if isinstance(target, ast.Tuple) and value.startswith("cuda.grid(") and \
                    all(isinstance(e, ast.Name) and stores.count(e.id) == 1 for e in target.elts):
                index.update({e.id: ast.parse(f"{value}[{k}]", mode="eval").body for k, e in enumerate(target.elts)})
                continue
        body.append(_renamed(s, index))
    lines = "\n".join(ast.unparse(s) for s in body).splitlines()
    return "Write " + ", then ".join(f"`{line.strip()}`" for line in lines) + "."


_INDICES = {"cuda.threadIdx.x", "cuda.threadIdx.y", "cuda.grid(1)",
            "cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x"}


def _renamed(node, names: dict):
    """A copy of the node with names replaced (by other names, or by expressions)."""
    class Rename(ast.NodeTransformer):
        def visit_Name(self, n):
            new = names.get(n.id)
            if new is None:
                return n
            return ast.Name(new, n.ctx) if isinstance(new, str) else copy.deepcopy(new)

    return ast.fix_missing_locations(Rename().visit(copy.deepcopy(node)))


def _unfenced(reply: str) -> str:
    return reply.split("```python\n", 1)[1].split("\n```", 1)[0]


DISGUISES = {
    "another kernel name": _another_name,
    "no decorator": _undecorated,
    "parameters swapped": _swapped,
    "body in a device function": _in_a_helper,
    "body in a helper, no decorator": lambda r: _in_a_helper(r, decorated=False),
    "body in a helper, its own names": lambda r: _in_a_helper(r, own_names=True),
    "every local renamed": _locals_renamed,
    "index written out, inline spans": _index_inline,
    "all of those at once": _everything_at_once,
}

# Statements one per inline span are no kernel to paste: to a learner who has every statement but
# the barrier they add only where the barrier goes, which an honest hint says too (BARRIER_HINTS).
LINE_BY_LINE = {"index written out, inline spans"}


# Hand-written: what a good level-2 or level-3 hint names. Each names fragments (an index, a test,
# a right-hand side, a shared cell, a barrier, an API call) and leaves every statement to the learner.
FRAGMENT_HINTS = {
    "map": ["`cuda.threadIdx.x` is this thread's number; use it as the position in both `a` and `out`.",
            "The value to store is `a[i] + 10`, where `i` is the thread's own number. Where does it go?",
            "Your output cell is `out[i]`; what goes into it is the input at the same `i`, plus ten."],
    "zip": ["Each thread reads `a[i]` and `b[i]` at its own `i = cuda.threadIdx.x`. What does it store?",
            "The sum `a[i] + b[i]` belongs in the cell with the same number, `out[i]`."],
    "guard": ["Which threads have `local_i < size` false? Those must not touch `a` or `out` at all.",
              "Wrap your read of `a[local_i]` in a test on `size`; the value is still `a[local_i] + 10`."],
    "map2d": ["Two numbers now: `cuda.threadIdx.x` and `cuda.threadIdx.y`. Both must be below `size` "
              "before you read `a[i, j]`.",
              "The test has two halves, `i < size` and `j < size`; the cell is `out[i, j]`."],
    "broadcast": ["Row `i` of the output uses `a[i, 0]`, column `j` uses `b[0, j]`. How do they combine?",
                  "Guard with `i < size and j < size`, then the value is a sum of one cell of each input."],
    "blocks": ["Your index must count the blocks before yours: `cuda.blockIdx.x * cuda.blockDim.x` of them, "
               "plus `cuda.threadIdx.x`.",
               "With several blocks, `cuda.threadIdx.x` repeats; `cuda.grid(1)` does not. Then test `i < size`."],
    "blocks2d": ["`cuda.grid(2)` gives the pair `(i, j)` across every block. Keep `i < size and j < size` "
                 "around the write.",
                 "The value is the same as in Map 2D, `a[i, j] + 10`; only the index changes."],
    "shared": ["Copy `a[i]` into the shared cell, wait at `cuda.syncthreads()`, then write `shared[local_i] + 10`.",
               "Only threads with `i < size` load `a[i]`; every thread then meets `cuda.syncthreads()`.",
               "The shared array is indexed with `local_i`, not `i`: `shared[local_i]`. What do threads past the "
               "end put there?"],
    "pooling": ["After `cuda.syncthreads()`, your window is `shared[local_i]`, `shared[local_i - 1]` and "
                "`shared[local_i - 2]`: which of them exist when `local_i` is 0 or 1?",
                "The sum `shared[local_i - 1]` is only there when `local_i >= 1`. Keep a running `total`.",
                "Load `a[i]` into `shared[local_i]` (zero past `size`), then barrier, then add up to three cells."],
    "dot": ["After `cuda.syncthreads()`, thread 0 reads `cache[t]` for every t and keeps a running total.",
            "Each thread should park `a[i] * b[i]` in its own slot; after the barrier, thread 0 adds up `cache[k]` "
            "over every k.",
            "The product `a[i] * b[i]` belongs in shared memory, and the sum of `cache[k]` belongs in `out[0]`.",
            "Only one thread, say `local_i == 0`, may write `out[0]`; the others leave after the barrier."],
    "conv1d": ["Threads near the end of the block also load a halo cell, `a[i + MAX_CONV]`, when "
               "`local_i >= TPB - MAX_CONV`.",
               "Each output is a sum over `j` of `a_shared[local_i + j] * b_shared[j]`. Which cells must be "
               "loaded before `cuda.syncthreads()`?",
               "The first `b_size` threads copy `b[local_i]`; the rest of `b_shared` should hold `0`."],
    "prefix_sum": ["Halve `stride` each round, starting from `TPB // 2`; a thread with `local_i < stride` adds "
                   "`cache[local_i + stride]` to its own cell.",
                   "There is a `cuda.syncthreads()` inside the loop too: after each round, before `stride` shrinks.",
                   "At the end `cache[0]` holds the block's sum; thread 0 writes it at `out[cuda.blockIdx.x]`."],
    "axis_sum": ["The row is `cuda.blockIdx.y` and the column `cuda.threadIdx.x`; load `a[row, col]` when "
                 "`col < size`.",
                 "Reduce the row in shared memory like Prefix Sum: `cache[col + stride]` added in while "
                 "`stride > 0`.",
                 "Only `col == 0` writes, and it writes `cache[0]` into `out[row, 0]`."],
    "matmul": ["Loop over `(size + TPB - 1) // TPB` tiles; in tile `t` a thread loads `a[i, t * TPB + local_j]`.",
               "Between loading the tiles and using them you need `cuda.syncthreads()`, and again before the "
               "next tile overwrites them.",
               "The inner loop multiplies `a_tile[local_i, k]` by `b_tile[k, local_j]` and keeps a running "
               "`total`."],
    "transpose": ["Read `a[row, col]` into `tile[ty, tx]`, then after the barrier read the tile transposed, "
                  "`tile[tx, ty]`.",
                  "The output block swaps the roles of `cuda.blockIdx.x` and `cuda.blockIdx.y`.",
                  "Both the read and the write need a guard: `row < rows and col < cols` for the read."],
    "scan_hillis_steele": ["Each round, a thread with `i >= offset` reads `cache[i - offset]` before anyone "
                           "writes: that read needs a barrier after it.",
                           "`offset` doubles each round: 1, 2, 4, ... while `offset < TPB`.",
                           "Keep the partner's value in a local such as `partner` across the `cuda.syncthreads()`."],
    "scan_blelloch": ["Two phases: up-sweep with `stride` doubling, down-sweep with it halving from "
                      "`ELEMS // 2`.",
                      "The cell a thread works on is `(t + 1) * 2 * stride - 1`; guard it with `right < ELEMS`.",
                      "Between the phases, thread 0 clears `tree[ELEMS - 1]`."],
    "warp_reduce": ["`cuda.shfl_down_sync(FULL_MASK, total, offset)` reads a neighbour's `total` "
                    "without shared memory.",
                    "Halve `offset` from `WARP // 2`; lane 0 (`cuda.laneid == 0`) ends with the warp's sum.",
                    "Threads past `size` should start from `0`, not from `a[i]`."],
    "histogram": ["Zero the block's bins first (threads with `t < BINS`), then `cuda.syncthreads()`.",
                  "`cuda.atomic.add` on the shared `block_hist` at index `a[i]` counts one value.",
                  "After the second barrier, each of the first `BINS` threads adds `block_hist[t]` to `out`."],
    "softmax_row": ["Start each thread from `-math.inf` so that padding never wins the max.",
                    "Two reductions over `cache`: first `max(cache[c], cache[c + stride])`, then a sum.",
                    "Each value becomes `math.exp(x - row_max)` before the sum; divide by `total` at the end."],
    "layernorm": ["`block_sum(cache, c)` already reduces; divide it by `cols` for the mean.",
                  "The variance sums `d * d` where `d` is `x - mean`; padding threads contribute `0.0`.",
                  "Normalise with `math.sqrt(var + 1e-5)`, then scale by `gamma[c]` and shift by `beta[c]`."],
    "matmul_tiled": ["Each tile step loads `a[i, a_col]` where the column is `t * TILE + ty`, or `0.0` outside.",
                     "Multiply `a_tile[tx, q] * b_tile[q, ty]` over `q`, with a barrier before and after.",
                     "The number of tile steps is `(k + TILE - 1) // TILE`."],
    "attention_causal": ["Row `i` attends to keys `0` to `i`, so the loop runs over `range(i + 1)`.",
                         "The score is the dot product of `q_row` and `k_row`, times `1.0 / math.sqrt(D)`.",
                         "Keep `running_max` and `running_sum`; rescale by `math.exp(running_max - new_max)`."],
}

# To a learner whose file has every step but the barrier: the hint names it and the cells around it.
BARRIER_HINTS = {
    "shared": ["Thread 3 reads `shared[local_i]` before it was written? Put `cuda.syncthreads()` between the "
               "load and the use, outside every `if`."],
    "pooling": ["Your window reads `shared[local_i - 1]`, written by another thread: `cuda.syncthreads()` must "
                "come between the loads and the sum."],
    "dot": ["Your `cache[local_i]` is read by thread 0 as `cache[k]` before the others have written it. Put "
            "`cuda.syncthreads()` between the two steps, where every thread reaches it."],
    "prefix_sum": ["Each round reads `cache[local_i + stride]` that another thread just wrote: one "
                   "`cuda.syncthreads()` after the load, and one inside the loop."],
    "transpose": ["`tile[tx, ty]` was written by another thread: add `cuda.syncthreads()` after the tile is "
                  "loaded and before the transposed read."],
    "histogram": ["Two barriers are missing: one after zeroing `block_hist[t]`, one before adding `block_hist[t]` "
                  "to `out`."],
    "matmul_tiled": ["Your inner loop reads `a_tile[tx, q]` before the tile is full: `cuda.syncthreads()` before "
                     "it, and another after it."],
}
