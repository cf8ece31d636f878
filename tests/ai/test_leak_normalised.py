"""The leak guard judges code after normalising it: the issue "Scores and hints that mean what they
say", part 4. Each finding from outside is a test here, run by the real checker in the engine's child.

A model that hands over the answer in disguise changes one trivial thing that stops it running (the
kernel's name, its decorator, its parameters' order, its body moved into a helper) and the learner
undoes it in a keystroke; an honest coach names fragments (`cuda.syncthreads()`, `cache[t]`,
`i < size`) and leaves every statement to the learner. The guard withholds the first and shows the
second."""

import ast
import re

import pytest

from tutor.ai.hints import SimChecker
from tutor.ai.leakguard import LeakGuard, normalise_kernel
from tutor.engine.runner import Runner


@pytest.fixture(scope="module")
def runner():
    with Runner("sim") as r:
        yield r


def guard(catalog, runner, puzzle_id, learner=None):
    puzzle = catalog.get(puzzle_id)
    passes = SimChecker(puzzle_id, runner=runner)
    return LeakGuard(puzzle.reference, puzzle.starter, puzzle.starter if learner is None else learner, passes)


def every_step_but_the_barrier(puzzle):
    return puzzle.reference.replace("cuda.syncthreads()", "pass")


def fenced(code):
    return f"Compare your kernel with this one:\n\n```python\n{code.rstrip()}\n```\n"


# -- one trivial change that stops the reference running ------------------------------------------

def another_kernel_name(reference):
    return reference.replace("def kernel(", "def block_kernel(")


def no_decorator(reference):
    return reference.replace("@cuda.jit\n", "")


def parameters_swapped(reference):
    return re.sub(r"def kernel\((\w+), (\w+),", r"def kernel(\2, \1,", reference)


def body_in_a_helper(reference):
    """The kernel's body moved into a function the kernel calls (a helper without
    `@cuda.jit(device=True)`, so the checker refuses it)."""
    tree = ast.parse(reference)
    kernel = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    params = ", ".join(a.arg for a in kernel.args.args)
    helper = ast.parse(f"def body({params}):\n    pass").body[0]
    helper.body, kernel.body = kernel.body, ast.parse(f"body({params})").body
    tree.body.insert(tree.body.index(kernel), helper)
    return ast.unparse(tree)


ONE_CHANGE = {"another kernel name": another_kernel_name, "no decorator": no_decorator,
              "parameters swapped": parameters_swapped, "body in a helper": body_in_a_helper}


# Escaped today's main: the learner's file had every step but the barrier, so no statement of the
# solution was left to stand for, and the kernel as written failed the checker: shown whole.
@pytest.mark.parametrize("change", ONE_CHANGE)
@pytest.mark.parametrize("puzzle_id", ["dot", "shared"])
def test_the_reference_with_one_change_that_stops_it_running_is_withheld(catalog, runner, puzzle_id, change):
    puzzle = catalog.get(puzzle_id)
    disguised = ONE_CHANGE[change](puzzle.reference)
    passes = SimChecker(puzzle_id, runner=runner)
    assert not passes(disguised) and passes(puzzle.reference)  # the change stops it; undoing it passes
    g = guard(catalog, runner, puzzle_id, every_step_but_the_barrier(puzzle))
    leak = g.judge(fenced(disguised))
    assert leak is not None, "shown"
    assert "solves the puzzle" in leak.reason and g.checks_run >= 1


# Escaped today's main: with one statement left to write, a hint had to stand for two before it
# counted, so the whole kernel, renamed, was shown to a learner missing its last line.
@pytest.mark.parametrize("change", ONE_CHANGE)
def test_the_last_statement_left_given_in_a_whole_kernel_is_withheld_by_reading(catalog, runner, change):
    puzzle = catalog.get("shared")
    last_write = "    if i < size:\n        out[i] = shared[local_i] + 10\n"
    assert puzzle.reference.endswith(last_write)
    g = guard(catalog, runner, "shared", puzzle.reference.removesuffix(last_write))
    leak = g.judge(fenced(ONE_CHANGE[change](puzzle.reference)))
    assert leak is not None and leak.reasons[0].startswith("its code stands for 1 of the 1 statements")


# Escaped today's main: `gpu-tutor hint map --level 2` printed this (the index written out in full
# made it no line of the reference, and an inline span was never run).
def test_maps_answer_in_an_inline_span_with_the_index_written_out_is_withheld(catalog, runner):
    text = "Each thread handles one element: `out[cuda.threadIdx.x] = a[cuda.threadIdx.x] + 10` and you are done."
    leak = guard(catalog, runner, "map").judge(text)
    assert leak is not None and leak.code == ["out[cuda.threadIdx.x] = a[cuda.threadIdx.x] + 10"]


# Escaped today's main (withheld a month before): `cuda.grid(1)` is `cuda.threadIdx.x` in one block.
def test_maps_answer_with_cuda_grid_in_an_inline_span_is_withheld(catalog, runner):
    assert guard(catalog, runner, "map").judge("Use `out[cuda.grid(1)] = a[cuda.grid(1)] + 10` there.") is not None


@pytest.mark.parametrize("index", ["cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x",
                                   "cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x", "cuda.grid(1)"])
def test_an_index_written_any_way_with_renamed_locals_stands_for_the_reference(catalog, runner, index):
    g = guard(catalog, runner, "dot")
    text = (f"Like this:\n```python\nslot = cuda.threadIdx.x\nif {index} < size:\n"
            f"    cache[slot] = a[{index}] * b[{index}]\nelse:\n    cache[slot] = 0\n```\n"
            "and thread 0 does `s += cache[j]` for each j.")
    leak = g.judge(text)
    assert leak is not None and "stands for 3 of the 4" in leak.reasons[0] and g.checks_run == 0


# Escaped today's main: two right-hand sides of dot's four statements counted as two statements.
@pytest.mark.parametrize("puzzle_id, text", [
    ("dot", "After `cuda.syncthreads()`, thread 0 reads `cache[t]` for every t and keeps a running total."),
    ("dot", "Each thread should park `a[i] * b[i]` in its own slot; after the barrier, thread 0 adds up "
            "`cache[k]` over every k."),
    ("dot", "The product `a[i] * b[i]` belongs in shared memory, and the sum of `cache[k]` belongs in `out[0]`."),
    ("shared", "Copy `a[i]` into the shared cell, wait at `cuda.syncthreads()`, then write `shared[local_i] + 10`."),
    ("shared", "Only threads with `i < size` load `a[i]`; every thread then meets `cuda.syncthreads()`."),
])
def test_a_hint_that_names_fragments_and_no_whole_statement_is_shown(catalog, runner, puzzle_id, text):
    leak = guard(catalog, runner, puzzle_id).judge(text)
    assert leak is None, leak.reasons


def test_fragments_are_shown_to_a_learner_missing_only_the_barrier(catalog, runner):
    puzzle = catalog.get("dot")
    g = guard(catalog, runner, "dot", every_step_but_the_barrier(puzzle))
    text = ("Your `cache[local_i]` is read by thread 0 as `cache[k]` before the others have written it. Put "
            "`cuda.syncthreads()` between the two steps, where every thread reaches it.")
    assert g.judge(text) is None


# -- the normal form itself -------------------------------------------------------------------------

def test_normalise_kernel_names_reorders_and_inlines_a_helper():
    code = ("def helper(x, y, n):\n    t = cuda.threadIdx.x\n    if t < n:\n        x[t] = y[t] + 1\n\n"
            "def go(a, out, size):\n    helper(out, a, size)\n")
    normal = ast.parse(normalise_kernel(code, ["out", "a", "size"]))
    kernel = next(n for n in normal.body if isinstance(n, ast.FunctionDef))
    assert [n.name for n in normal.body if isinstance(n, ast.FunctionDef)] == ["kernel"]
    assert ast.unparse(kernel.decorator_list[0]) == "cuda.jit"
    assert [a.arg for a in kernel.args.args] == ["out", "a", "size"]
    assert "out[t_" in ast.unparse(kernel) and "] = a[t_" in ast.unparse(kernel)


def test_normalise_kernel_keeps_a_helper_it_cannot_inline_and_makes_it_a_device_function():
    code = ("def first(v, n):\n    for k in range(n):\n        if v[k] > 0:\n            return k\n    return n\n\n"
            "@cuda.jit\ndef kernel(out, a, size):\n    out[0] = first(a, size)\n")
    normal = normalise_kernel(code, ["out", "a", "size"])
    assert "@cuda.jit(device=True)\ndef first(v, n):" in normal


# A learner one slip away (their kernel misnamed): any code pasted into their file passes once the
# name is put back, so running a hint's code there would withhold every hint with code in it.
def test_a_hint_to_a_learner_whose_only_slip_is_the_kernels_name_is_judged_by_reading(catalog, runner):
    learner = another_kernel_name(catalog.get("map").reference)
    g = guard(catalog, runner, "map", learner)
    text = ("Your body is right, and a neighbour's index would be\n```python\nnext_i = local_i + 1\n```\n"
            "but you need none. Which function does the checker call?")
    assert g.judge(text) is None and g.checks_run == 1  # the one run: their own file, its name put back
    assert g.judge("Same idea: `out[local_i] = a[local_i] + 10`.") is None  # their own line


# Escaped the first normal form: the two stores of a two-element scan read alike, so a learner who
# wrote one had "nothing left" and the other, given whole, was shown.
def test_a_statement_that_reads_like_one_on_screen_still_counts_when_the_solution_has_two(catalog, runner):
    puzzle = catalog.get("scan_blelloch")
    last = "    if hi < size:\n        out[hi] = tree[hi]\n"
    assert puzzle.reference.endswith(last)
    g = guard(catalog, runner, "scan_blelloch", puzzle.reference.removesuffix(last))
    leak = g.judge("Then the second element: `if hi < size:` and `out[hi] = tree[hi]`.")
    assert leak is not None and "stands for 1 of the 1" in leak.reasons[0]
    assert g.judge("Your `out[lo] = tree[lo]` is right; which element does it leave out?") is None


# Escaped the first normal form: a grid-stride loop given as two inline spans, header and body, was
# not run (neither span runs alone) and reads as trivial lines (a loop header, a copy on screen).
def test_a_header_span_and_the_span_after_it_are_run_as_one_block(catalog, runner):
    g = guard(catalog, runner, "perf_copy")
    leak = g.judge("Loop `for k in range(cuda.grid(1), size, cuda.gridsize(1)):` and in it `out[k] = a[k]`.")
    assert leak is not None and "solves the puzzle" in leak.reason


# A learner's own lines, put in the order that works, are the answer to a learner whose only
# mistake is their order: a block of them is run, whatever is on their screen.
def test_the_learners_own_lines_in_the_order_that_works_are_withheld(catalog, runner):
    puzzle = catalog.get("shared")
    store = "        out[i] = shared[local_i] + 10\n"
    barrier_late = puzzle.reference.replace("    cuda.syncthreads()\n", "").replace(
        store, "        cuda.syncthreads()\n" + store)
    assert barrier_late != puzzle.reference
    g = guard(catalog, runner, "shared", barrier_late)
    body = ("if i < size:\n    shared[local_i] = a[i]\nelse:\n    shared[local_i] = 0\ncuda.syncthreads()\n"
            "if i < size:\n    out[i] = shared[local_i] + 10")
    leak = g.judge(f"Reorder yours:\n```python\n{body}\n```")
    assert leak is not None and "solves the puzzle" in leak.reason
