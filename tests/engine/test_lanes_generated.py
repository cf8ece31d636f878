"""The lanes (sim/lanes.py) against the thread-by-thread simulator on GENERATED kernels.

A seeded generator (below, no hypothesis) writes small Numba-CUDA kernels from random pieces:
thread indices, integer and float arithmetic, divergent if/elif/else, and/or/not, ternaries, loops
over range() with uniform and per-thread bounds and steps (negative too), while loops,
break/continue, early returns, shared arrays written at a thread's index and read at another's
after a barrier, guarded global reads and writes, atomics (global and shared), device functions
that return values, casts and maths. About half the kernels are correct (guarded, barriers outside
branches); the others carry a deliberate bug (a race, an index out of bounds or negative, a
barrier in a divergent branch, a read of unwritten shared memory, a division by a value that may
be zero, a name set in one branch only, a device function that does not always return). The
promise is the same either way: the lanes' trace, barriers, arrays, failures, stopped threads and
outputs equal the thread-by-thread run's (lanes_pair.compare_source), the lanes falling back where
they would differ. So that it cannot pass by always falling back, most correct kernels must run as
lanes.

More seeds, locally: LANES_GEN_SEEDS=5000 [LANES_GEN_START=1000] pytest tests/engine/test_lanes_generated.py -n 0 -k many

The hand-written attacks at the end are the kernels a generator is unlikely to write; the last of
them are the kinds where the two simulators once differed (each now falls back, or agrees).

The same kernels (a share of the seeds) run again with LineRuns on, as the verifier runs them for the
modelled time: each warp's runs of each line (trace.line_runs) and the lines that ran must be equal
too; the attacks on Python's line events (loops left by break/continue/return, headers and statements
over several lines, device functions in loops, one-line compound statements, launches that go on
counting) are at the end.
"""

from __future__ import annotations

import os
import random
import textwrap
from collections import Counter

import numpy as np
import pytest

from lanes_pair import compare_source, differences
from tutor.engine.loading.sim_loader import load_for_sim

TPB = 64  # every shared array's length: no block is larger
# A float to a power (the lanes once rounded it as numpy's pow does, not as Python's); LANES_GEN_POW=0
# leaves it out.
FLOAT_POW = os.environ.get("LANES_GEN_POW", "1") == "1"


# -- the generator ---------------------------------------------------------------------------------
BLOCKS_1D = (1, 5, 32, 33, 64)
BLOCKS_2D = ((8, 4), (5, 3), (32, 2), (4, 8), (1, 5), (11, 3), (2, 32))


BUG_KINDS = (
    "int_div", "float_div",  # by a value that may be zero
    "oob_read", "bad_write",  # out of bounds (negative too), or two threads writing one cell
    "unguarded_search",  # a while loop reading past the end
    "one_branch", "loop_var",  # a name set in some threads only, then read
    "partial_shared_write", "other_index", "counter_unset",  # reads of unwritten shared memory
    "no_barrier", "barrier_in_branch", "barrier_at_end", "exchange_in_branch", "return_before_barrier",
    "device_none",  # a device function that returns None on a path
)


class KernelGen:
    """One random kernel: `source`, `launches` (for compare_source) and whether it is `buggy`."""

    def __init__(self, seed: int):
        self.seed = seed
        self.r = r = random.Random(seed)
        self.buggy = r.random() < 0.45
        self.two_d = r.random() < 0.3
        self.bugs = set(r.sample(BUG_KINDS, 1 + (r.random() < 0.3))) if self.buggy else set()
        self.out_int = r.random() < 0.2
        self.ints = ["i", "t", "nt", "n"]  # names every thread holds, of int values
        self.floats: list[str] = []
        self.fixed: set = {"i", "t", "nt", "n"}  # never assigned again
        self.devices: list = []  # (name, number of params, "int"/"float")
        self.lines: list[str] = []
        self.counter = 0
        self.loops = 0
        self._no_globals = False
        self.source = self._module()
        self.launches = self._launches()

    # -- helpers
    def p(self, prob: float) -> bool:
        return self.r.random() < prob

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def bug(self, kind: str, prob: float) -> bool:
        """Whether to put a bug of this kind here (a buggy kernel has one or two kinds)."""
        return kind in self.bugs and self.p(prob)

    def emit(self, depth: int, text: str):
        self.lines.append("    " * depth + text)

    # -- expressions
    def int_atom(self, extra=()):
        r = self.r
        pool = list(self.ints) + list(extra) + ["cuda.threadIdx.x", "cuda.blockIdx.x", "cuda.blockDim.x"]
        if self.two_d:
            pool += ["cuda.threadIdx.y", "cuda.blockDim.y"]
        if r.random() < 0.25:
            return str(r.choice((0, 1, 2, 3, 5, 7, -1, -3)))
        if r.random() < 0.3 and not self._no_globals:
            return r.choice(("t", "i"))
        return r.choice(pool)

    def int_expr(self, d: int = 2, extra=()) -> str:
        r = self.r
        if d <= 0 or r.random() < 0.3:
            return self.int_atom(extra)
        k = r.randrange(10)
        a = self.int_expr(d - 1, extra)
        if k <= 2:
            return f"({a} {r.choice('+-*')} {self.int_expr(d - 1, extra)})"
        if k == 3:
            op = r.choice(("//", "%"))
            if self.bug("int_div", 0.3):
                return f"({a} {op} ({self.int_expr(d - 1, extra)}))"
            if r.random() < 0.5:
                return f"({a} {op} {r.choice((1, 2, 3, 4, 5, -2, -3))})"
            return f"({a} {op} max(1, {self.int_expr(d - 1, extra)}))"
        if k == 4:
            return f"{r.choice(('min', 'max'))}({a}, {self.int_expr(d - 1, extra)})"
        if k == 5:
            return f"({a} if {self.cond(d - 1, extra)} else {self.int_expr(d - 1, extra)})"
        if k == 6:
            return f"int({self.float_expr(d - 1, extra)})"
        if k == 7 and any(kind == "int" for _, _, kind in self.devices):
            fname, nargs, _ = r.choice([x for x in self.devices if x[2] == "int"])
            return f"{fname}({', '.join(self.int_expr(d - 1, extra) for _ in range(nargs))})"
        if k == 8:
            return f"abs({a})"
        if k == 9 and r.random() < 0.6:
            j = r.randrange(6)
            if j == 0:
                return f"({a} {r.choice('&|^')} {self.int_expr(d - 1, extra)})"
            if j == 1:
                return f"((abs({a}) % 8) {r.choice(('<<', '>>'))} {r.randint(0, 3)})"
            if j == 2:
                return f"((({a}) % 5) ** {r.randint(0, 3)})"
            if j == 3:
                return f"numba.{r.choice(('int32', 'int64', 'int16', 'uint8'))}({a})"
            if j == 4:
                return f"(({self.cond(d - 1, extra)}) + ({self.cond(0, extra)}))"
            return f"({self.cond(d - 1, extra)} and {a} or {self.int_expr(d - 1, extra)})"
        return f"(-{a})" if r.random() < 0.3 else a

    def read_a(self, d, extra=()) -> str:
        if self._no_globals:
            return "0.25"
        j = self.int_expr(min(d, 1), extra)
        if self.bug("oob_read", 0.25):
            return f"a[{j}]"
        if self.p(0.5):
            return f"(a[{j}] if 0 <= {j} < n else 0.5)"
        return f"(a[{j}] if {j} >= 0 and {j} < n else -1.0)"

    def float_atom(self, extra=()):
        r = self.r
        k = r.randrange(6)
        if k == 0 and self.floats:
            return r.choice(self.floats)
        if k == 1:
            return r.choice(("0.5", "1.25", "-2.0", "3.0", "0.0", "1e-3"))
        if k == 2:
            return f"numba.float32({self.int_atom(extra)})"
        if k == 3:
            return self.read_a(0, extra)
        if self.floats:
            return r.choice(self.floats)
        return f"float({self.int_atom(extra)})"

    def float_expr(self, d: int = 2, extra=()) -> str:
        r = self.r
        if d <= 0 or r.random() < 0.25:
            return self.float_atom(extra)
        k = r.randrange(11)
        a = self.float_expr(d - 1, extra)
        if k <= 2:
            return f"({a} {r.choice('+-*')} {self.float_expr(d - 1, extra)})"
        if k == 3:
            if self.bug("float_div", 0.3):
                return f"({a} / ({self.float_expr(d - 1, extra)}))"
            return f"({a} / (abs({self.float_expr(d - 1, extra)}) + 1.0))"
        if k == 4:
            return f"math.sqrt(abs({a}))"
        if k == 5:
            return f"math.exp(min({a}, 3.0))"
        if k == 6:
            return f"numba.float32({a} * {self.int_expr(d - 1, extra)})"
        if k == 7:
            return f"({a} if {self.cond(d - 1, extra)} else {self.float_expr(d - 1, extra)})"
        if k == 8 and any(kind == "float" for _, _, kind in self.devices):
            fname, nargs, _ = r.choice([x for x in self.devices if x[2] == "float"])
            return f"{fname}({', '.join(self.float_expr(d - 1, extra) for _ in range(nargs))})"
        if k == 9:
            return f"{r.choice(('min', 'max'))}({a}, {self.float_expr(d - 1, extra)})"
        if k == 10 and r.random() < 0.5:
            j = r.randrange(5)
            if j == 0:
                return f"({a} {r.choice(('//', '%'))} {r.choice(('0.75', '-1.5', '2', '-3'))})"
            if j == 1 and FLOAT_POW:
                return f"(abs({a}) ** {r.choice(('2', '0.5', '3'))})"
            if j == 2:
                return f"numba.float64({a})"
            if j == 3:
                return f"({a} * ({self.cond(d - 1, extra)}))"
            return f"({a} or {self.float_expr(d - 1, extra)})"
        return f"({a} + {self.int_expr(d - 1, extra)})"

    def cond(self, d: int = 1, extra=()) -> str:
        r = self.r
        k = r.randrange(8)
        cmp = r.choice(("<", "<=", ">", ">=", "==", "!="))
        if d <= 0 or k <= 2:
            return f"{self.int_expr(1, extra)} {cmp} {self.int_expr(1, extra)}"
        if k == 3:
            return f"{self.int_atom(extra)} % {r.choice((2, 3, 4))} == {r.choice((0, 1))}"
        if k == 4:
            return f"{self.float_expr(1, extra)} {cmp} {self.float_expr(1, extra)}"
        if k == 5:
            return f"({self.cond(d - 1, extra)}) {r.choice(('and', 'or'))} ({self.cond(d - 1, extra)})"
        if k == 6:
            return f"not ({self.cond(d - 1, extra)})"
        return f"{self.int_expr(0, extra)} {r.choice(('<', '<='))} {self.int_expr(1, extra)} < {self.int_expr(0, extra)}"

    # -- statements
    def assignable(self):
        return [v for v in self.ints + self.floats if v not in self.fixed]

    def stmt(self, depth: int, nest: int, in_loop: bool, extra=()):
        r = self.r
        k = r.randrange(13)
        names = self.assignable()
        if k <= 2 and names:
            v = r.choice(names)
            if v in self.floats and r.random() < 0.15:  # a float name holding an int in some threads
                self.emit(depth, f"{v} = {self.int_expr(1, extra)}")
            elif v in self.floats:
                self.emit(depth, f"{v} = {self.float_expr(2, extra)}")
            else:
                self.emit(depth, f"{v} = {self.int_expr(2, extra)}")
        elif k == 3 and names:
            v = r.choice(names)
            op = r.choice(("+=", "-=", "*=")) if v in self.floats else r.choice(("+=", "-="))
            value = self.float_expr(1, extra) if v in self.floats else self.int_expr(1, extra)
            self.emit(depth, f"{v} {op} {value}")
        elif k <= 5 and nest < 3:
            self.emit(depth, f"if {self.cond(2, extra)}:")
            self.block(depth + 1, nest + 1, in_loop, extra)
            while self.p(0.3):
                self.emit(depth, f"elif {self.cond(1, extra)}:")
                self.block(depth + 1, nest + 1, in_loop, extra)
            if self.p(0.5):
                self.emit(depth, "else:")
                self.block(depth + 1, nest + 1, in_loop, extra)
        elif k == 6 and nest < 3 and self.loops < 4:
            self.for_loop(depth, nest, extra)
        elif k == 7 and nest < 3 and self.loops < 4:
            self.while_loop(depth, nest, extra)
        elif k == 8:
            self.write_out(depth, extra)
        elif k == 9:
            value = r.choice(("1", "1.0", self.float_expr(1, extra), "numba.float32(t)"))
            op = r.choice(("add", "add", "add", "max", "min", "sub"))
            if self.p(0.3) and self.floats and not in_loop:
                self.emit(depth, f"{r.choice(self.floats)} = cuda.atomic.{op}(out, 0, {value})")
            else:
                self.emit(depth, f"cuda.atomic.{op}(out, 0, {value})")
        elif k == 10 and in_loop:
            self.emit(depth, f"if {self.cond(1, extra)}:")
            self.emit(depth + 1, r.choice(("break", "continue")))
        elif k == 11 and (self.p(0.3) or self.buggy):
            self.emit(depth, f"if {self.cond(1, extra)}:")
            self.emit(depth + 1, "return")
        elif k == 12 and self.buggy and self.bug("one_branch", 0.5):
            self.set_in_one_branch(depth, extra)
        else:
            self.write_out(depth, extra)

    def block(self, depth, nest, in_loop, extra=()):
        for _ in range(self.r.randint(1, 3)):
            self.stmt(depth, nest, in_loop, extra)

    def write_out(self, depth, extra=()):
        value = self.int_expr(2, extra) if self.out_int and self.p(0.5) else self.float_expr(2, extra)
        if self.bug("bad_write", 0.3):
            idx = self.r.choice(("i // 2 + 1", "i + 2", "i - 1", "t + 1", "(i * 7) % (n + 1)", "n - i"))
            self.emit(depth, f"out[{idx}] = {value}")
        elif self.p(0.2):  # over several lines
            self.emit(depth, "if (i <")
            self.emit(depth + 2, "n):")
            self.emit(depth + 1, "out[")
            self.emit(depth + 2, f"i + 1] = ({value} +")
            self.emit(depth + 3, f"{self.float_expr(1, extra)})")
        else:
            self.emit(depth, "if i < n:")
            self.emit(depth + 1, f"out[i + 1] {self.r.choice(('=', '=', '+='))} {value}")

    def for_loop(self, depth, nest, extra):
        r = self.r
        v = self.name("k")
        self.loops += 1
        k = r.randrange(7)
        if k == 0:
            rng = f"range({r.randint(0, 4)})"
        elif k == 1:
            rng = f"range({self.int_atom(extra)} % 4)"
        elif k == 2:
            rng = f"range(t, {r.choice(('n', 'nt', '2 * nt'))}, {r.choice(('nt', 'cuda.blockDim.x', '7'))})"
        elif k == 3:
            rng = f"range({self.int_atom(extra)} % 5, -1, -1)"
        elif k == 4:
            rng = f"range({r.randint(3, 6)}, {r.randint(-2, 1)}, {r.choice((-1, -2, -3))})"
        elif k == 5:
            rng = "range(i, n, cuda.gridsize(1))" if not self.two_d else "range(i, n, nt * cuda.gridDim.x)"
        else:
            rng = f"range({self.int_expr(1, extra)} % 3, {self.int_expr(1, extra)} % 6)"
        self.emit(depth, f"for {v} in {rng}:")
        self.block(depth + 1, nest + 1, True, extra + (v,))
        if self.buggy and self.bug("loop_var", 0.4):  # the loop variable read after the loop: unset where no trip ran
            self.emit(depth, "if i < n:")
            self.emit(depth + 1, f"out[i + 1] = {v}")

    def while_loop(self, depth, nest, extra):
        w = self.name("w")
        self.loops += 1
        if self.p(0.3):  # a search: the condition reads memory, short-circuit guarded
            self.emit(depth, f"{w} = {self.int_atom(extra)} % 7")
            guard = "" if self.bug("unguarded_search", 0.3) else f"{w} < n and "
            self.emit(depth, f"while {guard}a[{w}] {self.r.choice(('<', '>'))} {self.float_expr(1, extra)}:")
            self.emit(depth + 1, f"{w} += 1")
            self.block(depth + 1, nest + 1, True, extra)
            if depth == 1:  # set in every thread: usable after
                self.ints.append(w)
                self.fixed.add(w)
            return
        self.emit(depth, f"{w} = {self.int_atom(extra)} % {self.r.choice((3, 4, 6))}")
        self.emit(depth, f"while {w} > 0:")
        self.emit(depth + 1, f"{w} -= 1")
        self.block(depth + 1, nest + 1, True, extra + (w,))

    def set_in_one_branch(self, depth, extra):
        v = self.name("u")
        self.emit(depth, f"if {self.cond(1, extra)}:")
        self.emit(depth + 1, f"{v} = {self.float_expr(1, extra)}")
        self.emit(depth, "if i < n:")
        self.emit(depth + 1, f"out[i + 1] = {v}")

    # -- shared memory
    def shared_section(self, depth):
        r = self.r
        s = self.name("sh")
        is_int = self.p(0.3)
        self.emit(depth, f"{s} = cuda.shared.array(({'TPB' if self.p(0.8) else 'TPB, '}), "
                         f"{'numba.int32' if is_int else 'numba.float32'})")
        rounds = r.randint(1, 2)
        for rnd in range(rounds):
            value = self.int_expr(2) if is_int else self.float_expr(2)
            if self.bug("partial_shared_write", 0.3):
                self.emit(depth, f"if {self.cond(1)}:")
                self.emit(depth + 1, f"{s}[t] = {value}")
            else:
                self.emit(depth, f"{s}[t] = {value}")
            if self.bug("barrier_in_branch", 0.3):
                self.emit(depth, f"if {self.cond(1)}:")
                self.emit(depth + 1, "cuda.syncthreads()")
            elif not self.bug("no_barrier", 0.2):
                self.emit(depth, "cuda.syncthreads()")
            target = self.name("v")
            if self.bug("other_index", 0.3):
                idx = r.choice(("t + 1", "t - 1", "(t + 1) % TPB", "nt - t", f"{self.int_expr(1)}"))
            else:
                idx = f"({self.int_expr(1)}) % nt"
            self.emit(depth, f"{target} = {s}[{idx}]")
            (self.ints if is_int else self.floats).append(target)
            if rnd + 1 < rounds:
                self.emit(depth, "cuda.syncthreads()")

    def shared_counter(self, depth):
        c = self.name("cnt")
        self.emit(depth, f"{c} = cuda.shared.array(1, numba.int32)")
        if not self.bug("counter_unset", 0.7):
            self.emit(depth, "if t == 0:")
            self.emit(depth + 1, f"{c}[0] = 0")
            self.emit(depth, "cuda.syncthreads()")
        self.emit(depth, f"if {self.cond(1)}:")
        self.emit(depth + 1, f"cuda.atomic.add({c}, 0, {self.r.choice(('1', 't', '2'))})")
        self.emit(depth, "cuda.syncthreads()")
        v = self.name("c")
        self.emit(depth, f"{v} = {c}[0]")
        self.ints.append(v)

    def shared_loop(self, depth):
        """A uniform loop with barriers: a tree-like exchange."""
        s = self.name("sh")
        v = self.name("s")
        self.emit(depth, f"{s} = cuda.shared.array(TPB, numba.float32)")
        self.emit(depth, f"{s}[t] = {self.float_expr(1)}")
        self.emit(depth, "cuda.syncthreads()")
        self.emit(depth, f"for {v} in range({self.r.randint(1, 3)}):")
        x = self.name("x")
        self.emit(depth + 1, f"{x} = {s}[(t + {v} + 1) % nt]")
        self.emit(depth + 1, "cuda.syncthreads()")
        self.emit(depth + 1, f"{s}[t] = {s}[t] + {x}")
        self.emit(depth + 1, "cuda.syncthreads()")
        f = self.name("f")
        self.emit(depth, f"{f} = {s}[(t * 3) % nt]")
        self.floats.append(f)

    # -- device functions
    def device(self):
        r = self.r
        fname = self.name("dev")
        kind = r.choice(("int", "float"))
        nargs = r.randint(1, 2)
        params = [f"p{j}" for j in range(nargs)]
        lines = ["@cuda.jit(device=True)", f"def {fname}({', '.join(params)}):"]
        saved = self.ints, self.floats, self.two_d
        if kind == "int":
            self.ints, self.floats = params, []
            ex = lambda: self.int_expr(2)  # noqa: E731
        else:
            self.ints, self.floats = [], params
            ex = lambda: self.float_expr(2)  # noqa: E731
        body = []
        try:
            self._no_globals = True
            if r.random() < 0.6:
                body.append(f"    if {self.cond(1)}:")
                body.append(f"        return {ex()}")
                if r.random() < 0.4:
                    body.append(f"    elif {self.cond(1)}:")
                    body.append(f"        return {ex()}")
            if r.random() < 0.3 or "device_none" in self.bugs:
                q = "q"
                body.append(f"    {q} = {ex()}")
                body.append("    for j in range(3):")
                body.append(f"        if {self.cond(1)}:")
                body.append(f"            {q} = {q} + {'j' if kind == 'int' else '1.5'}")
                body.append("            break")
                if self.bug("device_none", 0.7):  # a path that returns None
                    body.append(f"    if {q} != 0:")
                    body.append(f"        return {q}")
                else:
                    body.append(f"    return {q}")
            else:
                body.append(f"    return {ex()}")
        finally:
            self._no_globals = False
            self.ints, self.floats, self.two_d = saved
        self.devices.append((fname, nargs, kind))
        return lines + body

    def exchange_device(self):
        fname = self.name("swap")
        lines = ["@cuda.jit(device=True)", f"def {fname}(t, nt, v):",
                 "    s = cuda.shared.array(TPB, numba.float32)",
                 "    s[t] = v",
                 "    cuda.syncthreads()",
                 f"    r = s[(t + {self.r.randint(1, 5)}) % nt]",
                 "    cuda.syncthreads()",
                 "    return r"]
        return fname, lines

    # -- the module
    def device_functions(self) -> list:
        """The module's device functions (none to two), as lines."""
        devs: list = []
        for _ in range(max(self.r.choice((0, 0, 1, 2)), "device_none" in self.bugs)):
            devs += self.device() + [""]
        return devs

    def locals_(self):
        """The kernel's first integer and float variables."""
        for _ in range(self.r.randint(1, 2)):
            v = self.name("x")
            self.emit(1, f"{v} = {self.int_expr(2)}")
            self.ints.append(v)
        for _ in range(self.r.randint(1, 2)):
            v = self.name("f")
            self.emit(1, f"{v} = {self.float_expr(2)}")
            self.floats.append(v)

    def ending(self, devs: list, most: int):
        """The kernel's last pieces: a block-wide exchange through a device function, a few
        statements (2 to `most`), maybe a barrier in a branch, and the write of out."""
        if self.p(0.15) or "exchange_in_branch" in self.bugs:
            fname, lines = self.exchange_device()
            devs += lines + [""]
            v = self.name("e")
            call = f"{fname}(t, nt, {self.float_expr(1)})"
            if self.bug("exchange_in_branch", 0.7):
                self.emit(1, f"{v} = 0.0")
                self.emit(1, f"if {self.cond(1)}:")
                self.emit(2, f"{v} = {call}")
            else:
                self.emit(1, f"{v} = {call}")
            self.floats.append(v)
        for _ in range(self.r.randint(2, most)):
            self.stmt(1, 0, False)
        if self.bug("barrier_at_end", 0.8):
            self.emit(1, f"if {self.cond(1)}:")
            self.emit(2, "cuda.syncthreads()")
        self.emit(1, "if i < n:")
        self.emit(2, f"out[i + 1] = {' + '.join(self.floats[-2:] + self.ints[-1:])}")

    def _module(self) -> str:
        head = ["from numba import cuda", "import numba", "import math", "", f"TPB = {TPB}", ""]
        devs = self.device_functions()
        # device bodies must not read `a` (no such name there): they were made with read_a off
        self.emit(0, "@cuda.jit")
        self.emit(0, "def kernel(out, a, n):")
        if self.two_d:
            self.emit(1, "t = cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x")
            self.emit(1, "nt = cuda.blockDim.x * cuda.blockDim.y")
            self.emit(1, "i = cuda.blockIdx.x * nt + t")
        else:
            self.emit(1, "t = cuda.threadIdx.x")
            self.emit(1, "nt = cuda.blockDim.x")
            self.emit(1, "i = cuda.grid(1)" if self.p(0.5) else "i = cuda.blockIdx.x * cuda.blockDim.x + t")
        self.locals_()
        if self.buggy and self.bug("return_before_barrier", 0.8):
            self.emit(1, f"if {self.cond(1)}:")
            self.emit(2, "return")
        if self.p(0.55) or self.bugs & {"partial_shared_write", "other_index", "no_barrier", "barrier_in_branch",
                                        "return_before_barrier"}:
            self.shared_section(1)
        if self.p(0.25) or "counter_unset" in self.bugs:
            self.shared_counter(1)
        if self.p(0.2):
            self.shared_loop(1)
        self.ending(devs, most=5)
        return "\n".join(head + devs + self.lines) + "\n"

    def _launches(self):
        r = self.r
        out = []
        for k in range(r.choice((1, 1, 2))):
            blocks = r.randint(1, 3)
            threads = r.choice(BLOCKS_2D) if self.two_d else r.choice(BLOCKS_1D)
            per = threads[0] * threads[1] if self.two_d else threads
            total = blocks * per
            n = max(1, total + r.randint(-6, 2))
            a = np.round(np.array([r.uniform(-4, 4) for _ in range(n)]), 2).astype(np.float32)
            if r.random() < 0.1:  # a NaN or an infinity among the inputs
                a[r.randrange(n)] = r.choice((np.nan, np.inf, -np.inf))
            dtype = np.int32 if self.out_int else np.float32
            named = [("out", np.zeros(n + 1, dtype=dtype)), ("a", a), ("n", n)]
            out.append((f"{blocks}x{threads} n={n}", blocks, threads, named))
        return out


# -- running them ------------------------------------------------------------------------------------
def compare_fresh(source: str, launches) -> list:
    """compare_source, but each side of each launch on a module loaded afresh. CPython 3.11
    specializes a function's bytecode once it has run a few times, and an UnboundLocalError raised
    in specialized code (STORE_FAST__LOAD_FAST) is reported on the line BEFORE the read: with one
    module for both runs, the second (thread-by-thread) run of a kernel whose lanes fell back can
    name another line than the first. Fresh modules make both runs equally cold."""
    out = []
    for label, blocks, threads, named in launches:
        fallback, _, found = run_pair(source, blocks, threads, named, {})
        out.append((label, fallback, found))
    return out


def run_seeds(seeds) -> tuple[list, Counter, Counter]:
    """(differences, fallback reasons of the correct kernels' launches, of the buggy ones')."""
    differ: list = []
    correct: Counter = Counter()
    buggy: Counter = Counter()
    for seed in seeds:
        gen = KernelGen(seed)
        for label, fallback, found in compare_fresh(gen.source, gen.launches):
            (buggy if gen.buggy else correct)[fallback] += 1
            if found:
                differ.append(described(seed, gen, label, found))
    return differ, correct, buggy


def described(seed: int, gen, label: str, found: list) -> str:
    """A difference found on a generated kernel, with the kernel, for the failure's message."""
    return (f"seed {seed} ({'buggy' if gen.buggy else 'correct'}), launch {label}:\n"
            + "\n".join(f"  {d}" for d in found) + "\n" + gen.source)


def tally(counter: Counter) -> str:
    return "\n".join(f"  {v:4d}  {k if k is not None else 'ran as lanes'}" for k, v in counter.most_common())


BATCH = 25
SEEDS = 400  # about 1 s of the two simulators per batch on this 2-core machine


@pytest.mark.parametrize("first", range(0, SEEDS, BATCH), ids=lambda f: f"seeds{f}-{f + BATCH - 1}")
def test_generated_kernels_give_the_same_trace_as_lanes(first):
    differ, correct, buggy = run_seeds(range(first, first + BATCH))
    assert not differ, f"{len(differ)} launches differ; the first:\n{differ[0]}"
    ran, total = correct[None], sum(correct.values())
    # most correct kernels run as lanes (the rest: atomics the lanes cannot order, in loops mostly),
    # so the comparison is not passed by falling back
    assert total >= 10 and ran >= 0.6 * total, f"{ran} of {total} correct launches ran as lanes:\n{tally(correct)}"
    # and the bugs are there: some buggy launches fall back for them
    assert sum(v for k, v in buggy.items() if k is not None) >= 2, tally(buggy)


@pytest.mark.skipif(not os.environ.get("LANES_GEN_SEEDS"), reason="set LANES_GEN_SEEDS=N to run N more seeds")
def test_many_generated_kernels():
    start = int(os.environ.get("LANES_GEN_START", "100000"))
    count = int(os.environ["LANES_GEN_SEEDS"])
    differ, correct, buggy = run_seeds(range(start, start + count))
    print(f"correct launches:\n{tally(correct)}\nbuggy launches:\n{tally(buggy)}")
    assert not differ, f"{len(differ)} launches differ; the first three:\n" + "\n".join(differ[:3])


def test_the_generator_writes_what_it_promises():
    """Every piece the generator promises turns up in the fixed seeds, and correct and buggy kernels
    come in fair shares."""
    text = "\n".join(KernelGen(seed).source for seed in range(SEEDS))
    for piece in ("cuda.threadIdx.y", "cuda.blockIdx.x", "cuda.blockDim.x", "cuda.grid(1)", " // ", " % ",
                  "min(", "max(", "elif ", "else:", " and ", " or ", "not (", " if ", "for ", "while ",
                  "break", "continue", "return", "cuda.shared.array((TPB", "numba.int32)",
                  "cuda.syncthreads()", "cuda.atomic.add(out, 0", "cuda.atomic.add(cnt", "device=True",
                  "numba.float32(", "int(", "math.exp(", "math.sqrt(", ", -1, -1)", "range(t, ",
                  "out[i - 1]", "out[i // 2 + 1]", "a[-", "return q", " ** ", " << ", "numba.uint8("):
        assert piece in text, piece
    kinds = Counter(KernelGen(seed).buggy for seed in range(SEEDS))
    assert kinds[True] > SEEDS // 4 and kinds[False] > SEEDS // 4, kinds
    shapes = Counter(str(launch[2]) for seed in range(SEEDS) for launch in KernelGen(seed).launches)
    assert {"1", "5", "32", "33", "64", "(8, 4)", "(32, 2)"} <= set(shapes), shapes


# -- hand-written attacks -------------------------------------------------------------------------------
HEAD = "from numba import cuda\nimport numba\nimport math\n\n"


def pair(body: str, threads=8, blocks=1, n=None, out=None, a=None):
    """compare_source on one launch of `body` (after the imports): [(label, fallback, differences)]."""
    per = threads if isinstance(threads, int) else threads[0] * threads[1]
    n = blocks * per if n is None else n
    out = np.zeros(n + 1, np.float32) if out is None else out
    a = (np.arange(n, dtype=np.float32) * 0.5 - 1) if a is None else a
    return compare_source(HEAD + textwrap.dedent(body), [("launch", blocks, threads, [("out", out), ("a", a), ("n", n)])])


def same(body: str, lanes: bool | None = None, **launch):
    """The two simulators agree; `lanes`: True where the lanes must have run, False where they must
    have fallen back."""
    [(_, fallback, found)] = pair(body, **launch)
    assert not found, "\n".join(found)
    if lanes is not None:
        assert (fallback is None) == lanes, fallback


TRICKY = {
    "augassign order: a[i] += f(a[j])": (dict(), True, """
        @cuda.jit(device=True)
        def f(x):
            return x * 2.0
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            out[i] += f(a[(i + 1) % n])
            out[i] = out[i] + a[int(out[i] > 0)]
        """),
    "chained comparison with reads": (dict(a=np.array([0, 1, 2, 0, 5, 6, 1, 2], np.float32)), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            if a[i] < a[(i + 1) % n] < a[(i + 2) % n] != a[(i + 3) % n]:
                out[i] = 1.0
        """),
    "short-circuit and guards an out-of-bounds read": (dict(threads=12, n=8), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            if i < n and a[i] > 0:
                out[i] = 1.0
            x = i >= n or a[i]
            if i < n:
                out[i] += x
        """),
    "short-circuit or guards a negative index": (dict(), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x - 2
            if i < 0 or a[i] > 0:
                out[i + 2] = 1.0
        """),
    "the loop variable after a break some lanes took": (dict(threads=16), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            for k in range(10):
                if k >= i:
                    break
            out[i] = k
        """),
    "the loop variable after a loop some lanes never entered": (dict(), False, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            for k in range(i):
                if k > 3:
                    break
            out[i] = k
        """),
    "a name set in one branch, read by all": (dict(), False, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            if i % 2 == 0:
                v = a[i]
            out[i] = v
        """),
    "a name set in one branch, read under the same test": (dict(), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            if i % 2 == 0:
                v = a[i]
            if i % 2 == 0:
                out[i] = v
        """),
    "a shared array declared in a branch every thread takes": (dict(), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            if n > 0:
                s = cuda.shared.array(64, numba.float32)
            s[i] = a[i]
            cuda.syncthreads()
            out[i] = s[(i + 1) % n]
        """),
    "a shared array declared in a loop, and in a device function called twice": (dict(), True, """
        @cuda.jit(device=True)
        def rotate(i, v):
            s = cuda.shared.array(64, numba.float32)
            s[i] = v
            cuda.syncthreads()
            r = s[(i + 1) % cuda.blockDim.x]
            cuda.syncthreads()
            return r
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            acc = rotate(i, rotate(i, a[i]) + 1.0)
            for k in range(3):
                s = cuda.shared.array(64, numba.float32)
                s[i] = a[i] + k
                cuda.syncthreads()
                acc += s[(i + k) % n]
                cuda.syncthreads()
            out[i] = acc
        """),
    "two shared arrays, one 2-D": (dict(threads=64), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            s = cuda.shared.array(64, numba.float32)
            q = cuda.shared.array((8, 8), numba.int32)
            s[i] = a[i]
            q[i // 8, i % 8] = i * 3
            cuda.syncthreads()
            out[i] = s[(i + 1) % n] + q[(i + 1) % 8, i // 8]
        """),
    "atomics on shared memory, their old values used": (dict(a=np.array([1, -1, 2, 3, -1, 1, 1, -5], np.float32)),
                                                        True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            c = cuda.shared.array(4, numba.int32)
            if i < 4:
                c[i] = 5 * i
            cuda.syncthreads()
            if a[i] > 0:
                k = cuda.atomic.add(c, 0, 1)
                out[k] = i
            x = cuda.atomic.inc(c, 1, 7) + cuda.atomic.dec(c, 2, 9) + cuda.atomic.exch(c, 3, i)
            cuda.syncthreads()
            out[8 - i] = x + c[0] * 100
        """),
    "atomics in two branches (the lanes would reorder them)": (dict(), False, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            if i % 2 == 0:
                x = cuda.atomic.add(out, 8, 1.0)
            else:
                x = cuda.atomic.add(out, 8, 10.0)
            out[i] = x
        """),
    "int and float in one name": (dict(out=np.zeros(9, np.int32)), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            x = i if i % 2 else 2.5
            y = min(i, 3.5)
            out[i] = (x // 2) * 10 + x % 3 + x / 2 + y
        """),
    "bools in arithmetic": (dict(), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            b = i > 2
            out[i] = (b + (i > 4)) * 2.5 - (~b) + abs(b) + -b + int(b) + float(i < 3) + (b ^ 1) + (b << 2)
        """),
    "int32 and uint8 stores that overflow": (dict(out=np.zeros(9, np.int32)), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            out[i] = (i + 1) * 1000000000 + numba.uint8(i * 100 - 300) + numba.int16(i * 10000)
            out[i] += 2147483000
        """),
    "NaN made in the kernel: comparisons, min/max, not, int stores": (dict(out=np.zeros(9, np.int32)), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            big = (a[i] + 3.0) * 1e300 * 1e300
            y = big - big if i % 2 else a[i]
            z = 0.0
            if y < 0 or y >= 0:
                z = 1.0
            else:
                z = max(y, 2.0) + min(2.0, y)
            z += (y != y) + (not y) + (y == y)
            out[i] = z
        """),
    "statements over several lines": (dict(), True, """
        @cuda.jit(device=True)
        def f(x, y):
            return x + y
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            x = (a[i] +
                 a[(i + 1) % n]
                 * 2.0)
            if (i > 2 and
                    a[(i + 2) % n] > 0):
                out[
                    i] += (x
                           + f(a[i],
                               a[(i + 3) % n]))
            cuda.atomic.add(
                out,
                8,
                a[
                  i])
        """),
    "range() with negative steps, uniform and per thread": (dict(), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            s = 0.0
            for k in range(i, -1, -2):
                s += a[k]
            for k in range(5, i, -1):
                s += k
            for j in range(7, -3, -3):
                if j < i:
                    continue
                s += j
            out[i] = s + j
        """),
    "nested loops, break and continue at both levels": (dict(), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            s = 0
            for p in range(4):
                if p == i % 3:
                    continue
                for q in range(5):
                    if q > i:
                        break
                    if q == 2:
                        continue
                    s += p * 10 + q
                if s > 40:
                    break
            out[i] = s + p * 1000 + q * 100
        """),
    "a while loop whose condition reads memory": (dict(a=np.array([1, 1, -1, 2, 3, -1, 1, 1], np.float32)), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            k = i
            while k < n and a[k] > 0:
                k += 1
            while True:
                k += 1
                if k * k > i + 20:
                    break
            out[i] = k
        """),
    "device functions: tuples, loops with returns, recursion, writes": (dict(), True, """
        @cuda.jit(device=True)
        def two(x):
            if x % 2 == 0:
                return x, x * 2.0
            return x + 1, 0.5
        @cuda.jit(device=True)
        def find(arr, x, n):
            for k in range(n):
                if arr[k] > x:
                    return k
            return -1
        @cuda.jit(device=True)
        def depth(x):
            if x <= 0:
                return 0
            return depth(x - 1) + 2
        @cuda.jit(device=True)
        def put(out, i, v):
            if i % 2 == 0:
                out[i] = v
                return
            out[i] = -v
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            p, q = two(i)
            put(out, i, p + q + find(a, i * 0.3, n) + depth(i))
        """),
    "float // and % with negative operands, int // and % too": (dict(), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            x = a[i]
            out[i] = (x // 0.1) + (x % -0.3) * 7 + (-x) % 0.7 + (i - 4) // 3 + (i - 4) % -3
        """),
    "casts and maths": (dict(), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            x = a[i] * 1000.0
            out[i] = (numba.int8(x) + numba.uint8(x) * 1000 + numba.int32(-x) + numba.uint32(i - 3)
                      + numba.boolean(i - 3) + math.floor(a[i]) + math.ceil(a[i] * 3) + math.fabs(a[i])
                      + math.trunc(a[i]) + math.exp(a[i]) + math.sqrt(abs(a[i])) + numba.float32(a[i] * 0.1))
        """),
    "2-D block, 2-D output, cuda.grid(2)": (dict(threads=(4, 3), out=np.zeros((4, 3), np.float32)), True, """
        @cuda.jit
        def kernel(out, a, n):
            x, y = cuda.grid(2)
            if x < out.shape[0] and y < out.shape[1]:
                out[x, y] = x * 10 + y + cuda.threadIdx.z + cuda.blockDim.y
        """),
    "a for loop whose target is an array cell": (dict(), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            for out[i] in range(i % 3 + 1):
                pass
        """),
    "a device function's bare return, its result unused": (dict(), True, """
        @cuda.jit(device=True)
        def f(out, x):
            if x % 2 == 0:
                out[x] = 1.0
                return
            out[x] = 2.0
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            f(out, i)
        """),
    "barriers in a uniform if, and in a loop of per-thread but equal bounds": (dict(), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            s = cuda.shared.array(64, numba.float32)
            m = i * 0 + 3
            if n > 0:
                s[i] = a[i]
                cuda.syncthreads()
            for k in range(m):
                s[i] += k
                cuda.syncthreads()
                out[i] = s[(i + 1) % n]
                cuda.syncthreads()
        """),
    "a whole block returns early, the others meet a barrier": (dict(blocks=3, threads=5), True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.grid(1)
            if cuda.blockIdx.x == 1:
                return
            s = cuda.shared.array(64, numba.float32)
            s[cuda.threadIdx.x] = a[i]
            cuda.syncthreads()
            out[i] = s[(cuda.threadIdx.x + 1) % cuda.blockDim.x]
        """),
    "a 2-D block diverging on threadIdx.y around a 2-D shared array": (dict(threads=(8, 4)), True, """
        @cuda.jit
        def kernel(out, a, n):
            tx = cuda.threadIdx.x
            ty = cuda.threadIdx.y
            t = ty * cuda.blockDim.x + tx
            s = cuda.shared.array((4, 8), numba.float32)
            if ty % 2 == 0:
                s[ty, tx] = a[t]
            else:
                s[ty, tx] = -a[t]
            cuda.syncthreads()
            out[t] = s[(ty + 1) % 4, (tx + 3) % 8] if tx > ty else s[ty, 0]
        """),
    "device calls with writes inside a ternary and and/or": (dict(), True, """
        @cuda.jit(device=True)
        def bump(out, j):
            out[j] += 1.0
            return j
        @cuda.jit(device=True)
        def g(x):
            while True:
                x += 3
                if x > 10:
                    return x
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            x = bump(out, i) if i % 2 else -bump(out, i)
            y = i > 3 and bump(out, i) or g(i)
        """),
    "a barrier after some lanes returned": (dict(), False, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            s = cuda.shared.array(64, numba.float32)
            if i > 5:
                return
            s[i] = a[i]
            cuda.syncthreads()
            out[i] = s[(i + 1) % 6]
        """),
}


@pytest.mark.parametrize("name", list(TRICKY))
def test_tricky_kernels_give_the_same_trace(name):
    launch, lanes, body = TRICKY[name]
    same(body, lanes, **launch)


# -- where the lanes differed (found by the attacks above; each now falls back or agrees) ---------------
def differs(body: str, **launch):
    [(_, fallback, found)] = pair(body, **launch)
    assert not found, f"lanes ran: {fallback is None}\n" + "\n".join(found)


def test_shared_arrays_declared_in_two_branches():
    # thread-by-thread: thread 0 takes the else first, so its array is made first (arrays, events' aids)
    differs("""
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            if i > 0:
                cuda.shared.array(8, numba.int32)[i] = 1
            else:
                cuda.shared.array(8, numba.float32)[i] = 2.0
        """)


@pytest.mark.parametrize("body", [
    """
    K = 5
    @cuda.jit
    def kernel(out, a, n):
        i = cuda.threadIdx.x
        if i > 100:
            K = 2
        out[i] = K
    """,
    """
    @cuda.jit
    def kernel(out, a, n):
        i = cuda.threadIdx.x
        out[i] = min(i, 3)
        min = 2
    """,
], ids=["global", "builtin"])
def test_a_local_name_read_before_any_thread_set_it(body):
    differs(body)


def test_a_device_functions_bare_return_beside_a_value():
    differs("""
        @cuda.jit(device=True)
        def f(x):
            if x % 2 == 0:
                return x
            return
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            out[i] = f(i)
        """, threads=2)


@pytest.mark.parametrize("body, launch", [
    ("""
    @cuda.jit
    def kernel(out, a, n):
        i = cuda.threadIdx.x
        out[i] = a[i] ** 3
    """, dict(threads=1, a=np.array([0.31], np.float32), out=np.zeros(2, np.float64))),
    ("""
    @cuda.jit
    def kernel(out, a, n):
        i = cuda.threadIdx.x
        out[i] = 1.1 ** i
    """, dict(threads=8, out=np.zeros(9, np.float64))),
], ids=["array-cubed", "scalar-to-the-lane"])
def test_a_float_to_a_power(body, launch):
    differs(body, **launch)


@pytest.mark.parametrize("body, launch", [
    ("""
    @cuda.jit
    def kernel(out, a, n):
        i = cuda.threadIdx.x
        x = (i + 1) * 4294967296
        out[i] = x * 4294967296
    """, dict(threads=2)),
    ("""
    @cuda.jit
    def kernel(out, a, n):
        i = cuda.threadIdx.x
        out[i] = 2 ** (i + 63)
    """, dict(threads=2)),
    ("""
    @cuda.jit
    def kernel(out, a, n):
        i = cuda.threadIdx.x
        out[i] = abs(a[i]) // 2
    """, dict(threads=1, a=np.array([-2 ** 63], np.int64))),
], ids=["product", "power", "int64-min-negated"])
def test_an_integer_that_wraps_past_int64(body, launch):
    differs(body, **launch)


@pytest.mark.parametrize("body", [
    """
    @cuda.jit
    def kernel(out, a, n):
        i = cuda.threadIdx.x
        if i + 9007199254740993 == 9007199254740992.0:
            out[i] = 1.0
    """,
    """
    @cuda.jit
    def kernel(out, a, n):
        i = cuda.threadIdx.x
        out[i] = (i + 9007199254740993) / 3 - 3002399751580331.0
    """,
], ids=["comparison", "true-division"])
def test_an_integer_past_2_53_with_a_float(body):
    differs(body, threads=1)


def test_a_module_level_numpy_array_in_arithmetic():
    differs("""
        import numpy as np
        G = np.arange(8) * 1.0
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            out[i] = G * 2.0 + i
        """)


def test_nan_inputs_are_not_a_difference():
    """An input holding NaN: the arrays' initial values hold NaN on both sides (NaN != NaN, but the
    same repr); atomic max and min skip it the same."""
    same("""
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            c = cuda.shared.array(2, numba.float32)
            if i == 0:
                c[0] = -1e30
                c[1] = 1e30
            cuda.syncthreads()
            out[i] = cuda.atomic.max(c, 0, a[i]) + cuda.atomic.min(c, 1, a[i]) + (a[i] != a[i])
        """, True, a=np.array([1, np.nan, 3, -2, np.nan, 7, 0, 1], np.float32))


# == several blocks at once: groups of blocks as one set of lanes =====================================
# The lanes run up to lanes.GROUP_LANES threads of several blocks together, each block with its own
# barrier phase and shared arrays; a group that cannot falls back to its blocks one by one, then to
# the thread-by-thread run. The generator below writes kernels for launches of several blocks of up
# to 512 threads (1-D, 2-D and 3-D blocks, 1-D and 2-D grids, ragged last groups) whose blocks talk
# through global memory in the one launch: global tickets (atomics whose old values are indices),
# flags one block sets and the others read, reads of other blocks' outputs, atomics in loops, a
# last-block-done reduction; blocks with different numbers of barriers (loops of blockIdx-dependent
# trips), whole blocks (or halves of them) returning early, shared arrays made in loops and in device
# functions, dynamic shared memory (a launch's shared_bytes), and sampled launches (Sample with an
# explicit list of blocks, seconds=None).
from tutor.engine.sim import lanes as lanes_mod  # noqa: E402
from tutor.engine.sim.launch import Launch, Sample  # noqa: E402

GROUP_GRIDS_1D = (2, 3, 4, 5, 6, 9)
GROUP_GRIDS_2D = ((2, 2), (3, 2), (2, 3))
GROUP_THREADS_1D = (32, 64, 96, 128, 200, 256, 512)
GROUP_THREADS_2D = ((16, 8), (32, 4), (8, 8), (16, 16), (32, 16))
GROUP_THREADS_3D = ((8, 4, 2), (4, 4, 4), (16, 4, 8))
GROUP_TPB = 512
G_CELLS = 8  # the int32 scratch array `g`: tickets, flags, counters


class GroupGen(KernelGen):
    """A kernel of KernelGen's pieces and more, for a launch of several blocks; the kernel takes a
    fourth argument `g` (int32, G_CELLS cells, zeros) that blocks share."""

    def _module(self) -> str:
        r = self.r
        self.three_d = not self.two_d and r.random() < 0.12
        self.grid_2d = r.random() < 0.25
        self.dynamic = r.random() < 0.2
        self.dynamic_short = self.buggy and r.random() < 0.2  # fewer bytes than the kernel indexes
        self.ints += ["b", "nb"]
        self.fixed |= {"b", "nb"}
        head = ["from numba import cuda", "import numba", "import math", "", f"TPB = {GROUP_TPB}", ""]
        devs = self.device_functions()
        self.emit(0, "@cuda.jit")
        self.emit(0, "def kernel(out, a, n, g):")
        if self.two_d or self.three_d:
            self.emit(1, "t = (cuda.threadIdx.z * cuda.blockDim.y + cuda.threadIdx.y) * cuda.blockDim.x + "
                         "cuda.threadIdx.x")
            self.emit(1, "nt = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z")
        else:
            self.emit(1, "t = cuda.threadIdx.x")
            self.emit(1, "nt = cuda.blockDim.x")
        if self.grid_2d:
            self.emit(1, "b = cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x")
            self.emit(1, "nb = cuda.gridDim.x * cuda.gridDim.y")
        else:
            self.emit(1, "b = cuda.blockIdx.x")
            self.emit(1, "nb = cuda.gridDim.x")
        if not (self.two_d or self.three_d or self.grid_2d) and self.p(0.5):
            self.emit(1, "i = cuda.grid(1)")
        else:
            self.emit(1, "i = b * nt + t")
        if self.grid_2d and self.p(0.4):
            self.emit(1, "gx, gy = cuda.grid(2)")
            self.emit(1, "gw, gh = cuda.gridsize(2)")
            self.ints += ["gx", "gy", "gw"]
            self.fixed |= {"gx", "gy", "gw"}
        self.locals_()
        if self.p(0.2):  # a whole block leaves (before any barrier): every other block goes on
            self.emit(1, f"if b == {r.randint(0, 3)}:")
            self.emit(2, "return")
        if self.buggy and self.bug("return_before_barrier", 0.8):  # half a block leaves
            self.emit(1, f"if b % 2 == 1 and t >= nt // {r.choice((2, 3))}:")
            self.emit(2, "return")
        sections = [self.shared_section, self.shared_counter, self.shared_loop, self.block_loop,
                    self.dynamic_section, self.loop_declared, self.flag, self.ticket]
        chosen = [s for s in sections if self.p(0.3)]
        if self.bugs & {"partial_shared_write", "other_index", "no_barrier", "barrier_in_branch",
                        "return_before_barrier"} and self.shared_section not in chosen:
            chosen.append(self.shared_section)
        if "counter_unset" in self.bugs and self.shared_counter not in chosen:
            chosen.append(self.shared_counter)
        if self.dynamic and self.dynamic_section not in chosen:
            chosen.append(self.dynamic_section)
        r.shuffle(chosen)
        for section in chosen:
            section(1)
            for _ in range(r.randint(0, 2)):
                self.stmt(1, 0, False)
        self.ending(devs, most=4)
        if self.p(0.2):  # after every write of out: the last block to get here sums them
            self.last_block(1)
        return "\n".join(head + devs + self.lines) + "\n"

    def while_loop(self, depth, nest, extra):
        """KernelGen's while loops, a search bounded to a few cells (n is large here)."""
        if not self.p(0.3):
            w = self.name("w")
            self.loops += 1
            self.emit(depth, f"{w} = {self.int_atom(extra)} % {self.r.choice((3, 4, 6))}")
            self.emit(depth, f"while {w} > 0:")
            self.emit(depth + 1, f"{w} -= 1")
            self.block(depth + 1, nest + 1, True, extra + (w,))
            return
        w = self.name("w")
        self.loops += 1
        self.emit(depth, f"{w} = {self.int_atom(extra)} % 7")
        self.emit(depth, f"while {w} < n and {w} < 12 and a[{w}] {self.r.choice(('<', '>'))} {self.float_expr(1, extra)}:")
        self.emit(depth + 1, f"{w} += 1")
        self.block(depth + 1, nest + 1, True, extra)

    def int_atom(self, extra=()):
        if not self._no_globals and self.p(0.08):
            return self.r.choice(("cuda.blockIdx.y", "cuda.gridDim.x")) if self.grid_2d else "cuda.gridDim.x"
        return super().int_atom(extra)

    def stmt(self, depth, nest, in_loop, extra=()):
        """KernelGen's statements, and a fifth of the time one that talks to other blocks."""
        r = self.r
        if not self.buggy and (in_loop or nest) and self.p(0.5):  # fewer atomics in loops and branches
            return self.write_out(depth, extra)
        if not self.p(0.2):
            return super().stmt(depth, nest, in_loop, extra)
        k = r.randrange(7)
        if not self.buggy and k in (0, 4, 5) and self.p(0.7):  # races: mostly in the buggy kernels
            k = r.choice((1, 2, 3, 6))
        if k == 0:  # another block's output (written or not yet, thread by thread)
            v = self.name("o")
            step = r.choice(("nt", "nt + 1", "2 * nt", "(nb - 1) * nt", "1"))
            self.emit(depth, f"{v} = out[(i + {step}) % (n + 1)]")
            self.floats.append(v) if depth == 1 else None
        elif k == 1:  # a global ticket: the old value is an index
            v = self.name("tk")
            self.emit(depth, f"{v} = cuda.atomic.add(g, 0, {r.choice(('1', '1', '2', 't % 2'))})")
            self.emit(depth, f"if 0 <= {v} < n:")
            self.emit(depth + 1, f"out[{v} + 1] = {self.float_expr(1, extra)}")
        elif k == 2:  # atomics in a loop, their old values kept
            v = self.name("at")
            self.emit(depth, f"{v} = 0")
            self.emit(depth, f"for {v}k in range({r.choice(('b % 3', 't % 3', '2', 'nb - b'))}):")
            op = r.choice(("add", "add", "max", "min", "exch", "inc"))
            val = "100" if op == "inc" else r.choice(("1", "i", "b", f"{v}k"))
            self.emit(depth + 1, f"{v} += cuda.atomic.{op}(g, {r.choice(('1', '2', 'b % 2 + 1'))}, {val})")
            if depth == 1:
                self.ints.append(v)
        elif k == 3:  # a flag one thread of one block sets, read by all
            v = self.name("fl")
            who = r.choice(("0", "nb - 1", "1")) if self.buggy else "0"
            self.emit(depth, f"if b == {who} and t == {r.choice(('0', 'nt - 1'))}:")
            self.emit(depth + 1, f"g[4] = {self.int_expr(1, extra)}")
            self.emit(depth, f"{v} = g[4]")
            if depth == 1:
                self.ints.append(v)
        elif k == 4:  # the same value written by many threads (benign), then read
            self.emit(depth, f"g[5] = {r.choice(('7', 'nb', 'b'))}")
            if depth == 1:
                v = self.name("sv")
                self.emit(depth, f"{v} = g[5]")
                self.ints.append(v)
        elif k == 5:  # read, then write what another thread will read
            v = self.name("rw")
            self.emit(depth, f"{v} = out[(i + 1) % (n + 1)]")
            self.emit(depth, "if i < n:")
            self.emit(depth + 1, f"out[i + 1] = {v} + {self.float_expr(1, extra)}")
        else:  # an atomic on out whose old value is used
            v = self.name("ao")
            self.emit(depth, f"{v} = cuda.atomic.{r.choice(('add', 'max', 'min'))}(out, {r.choice(('0', 'b % (n + 1)'))}, "
                             f"{self.float_expr(1, extra)})")
            if depth == 1:
                self.floats.append(v)

    # -- sections with barriers, at the kernel's top level
    def block_loop(self, depth):
        """A loop whose trip count depends on the block, with barriers: blocks pass different numbers."""
        s, v, x = self.name("sb"), self.name("kb"), self.name("y")
        self.emit(depth, f"{s} = cuda.shared.array(TPB, numba.float32)")
        self.emit(depth, f"{s}[t] = {self.float_expr(1)}")
        self.emit(depth, "cuda.syncthreads()")
        self.emit(depth, f"for {v} in range({self.r.choice(('b % 3', 'b', 'nb - b', '(b + 1) % 2'))}):")
        self.emit(depth + 1, f"{x} = {s}[(t + {v} + 1) % nt]")
        self.emit(depth + 1, "cuda.syncthreads()")
        self.emit(depth + 1, f"{s}[t] = {x} + {v}")
        self.emit(depth + 1, "cuda.syncthreads()")
        f = self.name("f")
        self.emit(depth, f"{f} = {s}[(t * 5 + b) % nt]")
        self.floats.append(f)

    def dynamic_section(self, depth):
        d, v = self.name("dy"), self.name("dv")
        self.dynamic = True
        self.emit(depth, f"{d} = cuda.shared.array(0, numba.float32)")
        self.emit(depth, f"{d}[t] = {self.float_expr(1)}")
        self.emit(depth, "cuda.syncthreads()")
        self.emit(depth, f"{v} = {d}[(t + {self.r.randint(1, 9)}) % nt]")
        self.emit(depth, "cuda.syncthreads()")
        self.floats.append(v)

    def loop_declared(self, depth):
        """A shared array declared in a loop (one array, whatever the trip)."""
        v, s, acc = self.name("kl"), self.name("sl"), self.name("acc")
        self.emit(depth, f"{acc} = 0.0")
        self.emit(depth, f"for {v} in range({self.r.randint(1, 3)}):")
        self.emit(depth + 1, f"{s} = cuda.shared.array(TPB, {self.r.choice(('numba.float32', 'numba.int32'))})")
        self.emit(depth + 1, f"{s}[t] = t + {v} * b")
        self.emit(depth + 1, "cuda.syncthreads()")
        self.emit(depth + 1, f"{acc} += {s}[(nt - 1 - t + {v}) % nt]")
        self.emit(depth + 1, "cuda.syncthreads()")
        self.floats.append(acc)

    def flag(self, depth):
        """One block sets a flag; after a barrier (its own block's only) every thread reads it."""
        v = self.name("fg")
        self.emit(depth, f"if b == {self.r.choice(('0', 'nb - 1', 'nb // 2'))} and t == 0:")
        self.emit(depth + 1, f"g[6] = {self.r.choice(('1', 'b + 2', 'g[6] + 1'))}")
        self.emit(depth, "cuda.syncthreads()")
        self.emit(depth, f"{v} = g[6]")
        self.ints.append(v)

    def ticket(self, depth):
        """A block's ticket from a global counter, taken by its thread 0, shared through shared memory."""
        s, v = self.name("tb"), self.name("bt")
        self.emit(depth, f"{s} = cuda.shared.array(1, numba.int32)")
        self.emit(depth, "if t == 0:")
        self.emit(depth + 1, f"{s}[0] = cuda.atomic.add(g, 3, 1)")
        self.emit(depth, "cuda.syncthreads()")
        self.emit(depth, f"{v} = {s}[0]")
        self.emit(depth, f"if 0 <= {v} * nt + t < n:")
        self.emit(depth + 1, f"out[{v} * nt + t + 1] = {self.float_expr(1)}")
        self.ints.append(v)

    def last_block(self, depth):
        """The last block to finish sums every output (a threadfence reduction)."""
        v = self.name("ld")
        self.emit(depth, "cuda.threadfence()")
        self.emit(depth, "if t == 0:")
        self.emit(depth + 1, f"{v} = cuda.atomic.add(g, 7, 1)")
        self.emit(depth + 1, f"if {v} == nb - 1:")
        self.emit(depth + 2, f"{v}s = 0.0")
        self.emit(depth + 2, f"for {v}k in range(n):")
        self.emit(depth + 3, f"{v}s += out[{v}k + 1]")
        self.emit(depth + 2, f"out[0] = {v}s")

    def _launches(self):
        r = self.r
        out = []
        for k in range(r.choice((1, 1, 2))):
            if self.grid_2d:
                blocks = r.choice(GROUP_GRIDS_2D)
                nblocks = blocks[0] * blocks[1]
            else:
                blocks = r.choice(GROUP_GRIDS_1D)
                nblocks = blocks
            threads = r.choice(GROUP_THREADS_3D if self.three_d else GROUP_THREADS_2D if self.two_d
                               else GROUP_THREADS_1D)
            per = int(np.prod(threads))
            while nblocks * per > 3000:  # the thread-by-thread run's time
                threads = r.choice(GROUP_THREADS_1D[:4])
                per = threads
            total = nblocks * per
            n = max(1, total + r.randint(-6, 2))
            a = np.round(np.array([r.uniform(-4, 4) for _ in range(n)]), 2).astype(np.float32)
            dtype = np.int32 if self.out_int else np.float32
            g = np.zeros(G_CELLS, np.int32) if r.random() < 0.7 else \
                np.array([r.randint(-3, 3) for _ in range(G_CELLS)], np.int32)
            named = [("out", np.zeros(n + 1, dtype=dtype)), ("a", a), ("n", n), ("g", g)]
            opts = {}
            if self.dynamic:
                opts["shared_bytes"] = 4 * (per - 1 if self.dynamic_short else per)
            if r.random() < 0.15:
                if self.grid_2d:
                    every = [(x, y, 0) for y in range(blocks[1]) for x in range(blocks[0])]
                else:
                    every = [(x, 0, 0) for x in range(blocks)]
                picks = r.sample(every, r.randint(1, len(every)))
                opts["sample"] = Sample(blocks=picks, seconds=None)
            label = f"{blocks}x{threads} n={n}" + "".join(f" {k}={v!r}" for k, v in opts.items() if k != "sample") + \
                (f" sample={opts['sample'].blocks}" if "sample" in opts else "")
            out.append((label, blocks, threads, named, opts))
        return out


def run_pair(source: str, blocks, threads, named, opts) -> tuple:
    """One launch both ways, each on a module loaded afresh (see compare_fresh), with Launch's
    options (shared_bytes, sample): (the lanes' fallback reason or None, whether a group of
    several blocks ran together, differences)."""
    from lanes_pair import forced, fresh

    runs = []
    for enabled in (True, False):
        module = load_for_sim(source, "kernel.py")
        args = fresh(named)
        before = Counter(lanes_mod.TALLY)
        with forced(enabled):
            launch = Launch(module.kernel, blocks, threads, args, source_lines=module.lines, **opts)
            launch.run()
        split = sum(v - before[k] for k, v in lanes_mod.TALLY.items() if k.startswith("blocks one by one"))
        runs.append((launch, args, split))
    (a, a_args, split), (b, b_args, _) = runs
    found = differences(a, b, a_args, b_args)
    if a.ran_blocks != b.ran_blocks:
        found.append(f"ran_blocks differ: {a.ran_blocks} vs {b.ran_blocks}")
    grouped = a.lanes_fallback is None and not split
    return a.lanes_fallback, grouped, found


def run_group_seeds(seeds) -> tuple[list, Counter, Counter, int]:
    """(differences, fallback reasons of the correct kernels' launches, of the buggy ones', how
    many correct launches ran their groups together)."""
    differ: list = []
    correct: Counter = Counter()
    buggy: Counter = Counter()
    grouped = 0
    for seed in seeds:
        gen = GroupGen(seed)
        for label, blocks, threads, named, opts in gen.launches:
            fallback, together, found = run_pair(gen.source, blocks, threads, named, opts)
            (buggy if gen.buggy else correct)[fallback] += 1
            grouped += together and not gen.buggy
            if found:
                differ.append(described(seed, gen, label, found))
    return differ, correct, buggy, grouped


GROUP_BATCH = 20
GROUP_SEEDS = 100


@pytest.mark.parametrize("first", range(0, GROUP_SEEDS, GROUP_BATCH), ids=lambda f: f"group-seeds{f}-{f + GROUP_BATCH - 1}")
def test_generated_kernels_of_several_blocks_give_the_same_trace_as_lanes(first):
    differ, correct, buggy, grouped = run_group_seeds(range(first, first + GROUP_BATCH))
    assert not differ, f"{len(differ)} launches differ; the first:\n{differ[0]}"
    ran, total = correct[None], sum(correct.values())
    # blocks that talk through global memory fall back often (the order check), but not always
    assert total >= 8 and ran >= 2, f"{ran} of {total} correct launches ran as lanes:\n{tally(correct)}"
    assert grouped >= 1, f"only {grouped} correct launches ran their blocks together:\n{tally(correct)}"
    assert sum(v for k, v in buggy.items() if k is not None) >= 2, tally(buggy)


@pytest.mark.skipif(not os.environ.get("LANES_GEN_SEEDS"), reason="set LANES_GEN_SEEDS=N to run N more seeds")
def test_many_generated_kernels_of_several_blocks():
    start = int(os.environ.get("LANES_GEN_START", "100000"))
    count = int(os.environ["LANES_GEN_SEEDS"])
    differ, correct, buggy, grouped = run_group_seeds(range(start, start + count))
    print(f"correct launches ({grouped} as groups):\n{tally(correct)}\nbuggy launches:\n{tally(buggy)}")
    assert not differ, f"{len(differ)} launches differ; the first three:\n" + "\n".join(differ[:3])


def test_the_group_generator_writes_what_it_promises():
    gens = [GroupGen(seed) for seed in range(GROUP_SEEDS)]
    text = "\n".join(g.source for g in gens)
    for piece in ("cuda.atomic.add(g, 0", "cuda.atomic.add(g, 3, 1)", "g[4] = ", "g[6] = ", "g[5] = ",
                  "cuda.shared.array(0, numba.float32)", "for kb", "range(b % 3)", "if b == ", "return",
                  "cuda.blockIdx.y * cuda.gridDim.x", "cuda.grid(2)", "cuda.threadIdx.z", "cuda.atomic.exch(g",
                  "if ld", "cuda.threadfence()", "out[(i + nt) % (n + 1)]"):
        assert piece in text, piece
    launches = [launch for g in gens for launch in g.launches]
    assert any("sample" in opts for *_, opts in launches)
    assert any("shared_bytes" in opts for *_, opts in launches)
    assert any(isinstance(blocks, int) and blocks * threads > lanes_mod.GROUP_LANES
               for _, blocks, threads, *_ in launches if isinstance(threads, int))  # ragged groups


# -- hand-written attacks on groups of blocks (each agrees now) ------------------------------------------
GROUP_TRICKY = {
    "a shared array made only by block 1": (dict(blocks=2, threads=64), """
        @cuda.jit
        def kernel(out, a, n):
            t = cuda.threadIdx.x
            if cuda.blockIdx.x == 1:
                s = cuda.shared.array(64, numba.float32)
                s[t] = a[t]
                cuda.syncthreads()
                out[t] = s[(t + 1) % 64]
        """),
    "a global ticket: atomic old values as indices": (dict(blocks=4, threads=64, n=256), """
        @cuda.jit
        def kernel(out, a, n):
            t = cuda.threadIdx.x
            k = cuda.atomic.add(out, n, 1)
            out[int(k)] = cuda.blockIdx.x * 1000 + t
        """),
    "a global ticket in a loop": (dict(blocks=3, threads=64), """
        @cuda.jit
        def kernel(out, a, n):
            t = cuda.threadIdx.x
            for k in range(2):
                j = cuda.atomic.add(out, n, 1)
                out[int(j) % n] = t
        """),
    "block 1 writes what block 0 read before": (dict(blocks=2, threads=64), """
        @cuda.jit
        def kernel(out, a, n):
            t = cuda.threadIdx.x
            if cuda.blockIdx.x == 1:
                out[t] = 5.0
            x = out[t]
            if cuda.blockIdx.x == 0:
                out[t + 64] = x
        """),
    "a flag block 0 sets, every block reads": (dict(blocks=3, threads=64), """
        @cuda.jit
        def kernel(out, a, n):
            t = cuda.threadIdx.x
            if cuda.blockIdx.x == 0 and t == 0:
                out[n] = 7.0
            cuda.syncthreads()
            out[cuda.grid(1)] = out[n]
        """),
    "a flag the last block sets, every block reads": (dict(blocks=3, threads=64), """
        @cuda.jit
        def kernel(out, a, n):
            t = cuda.threadIdx.x
            if cuda.blockIdx.x == cuda.gridDim.x - 1 and t == 0:
                out[n] = 7.0
            cuda.syncthreads()
            out[cuda.grid(1)] = out[n]
        """),
    "blocks passing different numbers of barriers": (dict(blocks=4, threads=64), """
        @cuda.jit
        def kernel(out, a, n):
            t = cuda.threadIdx.x
            s = cuda.shared.array(64, numba.float32)
            s[t] = t
            for k in range(cuda.blockIdx.x):
                cuda.syncthreads()
                v = s[(t + 1) % 64]
                cuda.syncthreads()
                s[t] = v + k
            cuda.syncthreads()
            out[cuda.grid(1)] = s[t]
        """),
    "half of block 1 returns before a barrier": (dict(blocks=3, threads=64), """
        @cuda.jit
        def kernel(out, a, n):
            t = cuda.threadIdx.x
            if cuda.blockIdx.x == 1 and t > 30:
                return
            out[cuda.grid(1)] = t
            cuda.syncthreads()
            out[cuda.grid(1)] += 1
        """),
    "dynamic shared memory, in the kernel and a device function, beside a static array":
        (dict(blocks=3, threads=64, shared_bytes=256), """
        @cuda.jit(device=True)
        def g(t):
            d = cuda.shared.array(0, numba.float32)
            return d[(t + 3) % 64]
        @cuda.jit
        def kernel(out, a, n):
            t = cuda.threadIdx.x
            s = cuda.shared.array(0, numba.float32)
            q = cuda.shared.array(16, numba.int32)
            s[t] = a[cuda.grid(1)]
            if t < 16:
                q[t] = t
            cuda.syncthreads()
            out[cuda.grid(1)] = s[(t + 1) % 64] + g(t) + q[t % 16]
        """),
    "dynamic shared memory seen as float32 and int32": (dict(blocks=3, threads=64, shared_bytes=256), """
        @cuda.jit
        def kernel(out, a, n):
            t = cuda.threadIdx.x
            s = cuda.shared.array(0, numba.float32)
            s[t] = a[cuda.grid(1)]
            cuda.syncthreads()
            q = cuda.shared.array(0, numba.int32)
            out[cuda.grid(1)] = q[(t + 1) % 64]
        """),
    "a 3-D grid of 3-D blocks": (dict(blocks=(2, 3, 2), threads=(4, 4, 4)), """
        @cuda.jit
        def kernel(out, a, n):
            x, y, z = cuda.grid(3)
            w, h, d = cuda.gridsize(3)
            i = (z * h + y) * w + x
            s = cuda.shared.array(64, numba.float32)
            t = cuda.threadIdx.x + cuda.threadIdx.y * 4 + cuda.threadIdx.z * 16
            s[t] = cuda.blockIdx.z * 7 + cuda.blockIdx.y * 3 + cuda.blockIdx.x
            cuda.syncthreads()
            if i < n:
                out[i] = s[63 - t] + i
        """),
    "a ragged last group: 5 blocks of 512": (dict(blocks=5, threads=512, n=2400), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.grid(1)
            t = cuda.threadIdx.x
            s = cuda.shared.array(512, numba.float32)
            s[t] = a[i] if i < n else 0.0
            cuda.syncthreads()
            if i < n:
                out[i] = s[511 - t] + cuda.atomic.add(out, n, 1) * 0
        """),
    "blockIdx as lanes: powers, shifts, divisions by zero, range steps": (dict(blocks=4, threads=64), """
        @cuda.jit
        def kernel(out, a, n):
            b = cuda.blockIdx.x
            i = cuda.grid(1)
            s = 0
            for k in range(0, 4, b + 1):
                s += k
            out[i] = (b + 1) ** -1 + s + ~b + numba.int32(b * 2147483647) + (b or 2.5) + 5 // max(b, 1)
        """),
    "a sample of blocks, out of order and twice": (dict(blocks=5, threads=64, sample=[(3, 0, 0), (1, 0, 0), (3, 0, 0)]), """
        @cuda.jit
        def kernel(out, a, n):
            t = cuda.threadIdx.x
            i = cuda.grid(1)
            s = cuda.shared.array(64, numba.float32)
            s[t] = a[i]
            cuda.syncthreads()
            j = cuda.atomic.add(out, n, 1)
            out[i] = s[63 - t] + out[(i + 64) % n] + j * 0
        """),
}


@pytest.mark.parametrize("name", list(GROUP_TRICKY))
def test_tricky_kernels_of_several_blocks_give_the_same_trace(name):
    launch, body = GROUP_TRICKY[name]
    launch = dict(launch)
    blocks, threads = launch.pop("blocks"), launch.pop("threads")
    per = int(np.prod(threads))
    n = launch.pop("n", int(np.prod(blocks)) * per)
    opts = {}
    if "shared_bytes" in launch:
        opts["shared_bytes"] = launch.pop("shared_bytes")
    if "sample" in launch:
        opts["sample"] = Sample(blocks=launch.pop("sample"), seconds=None)
    named = [("out", np.zeros(n + 1, np.float32)), ("a", np.arange(n, dtype=np.float32) * 0.5 - 1), ("n", n)]
    _, _, found = run_pair(HEAD + textwrap.dedent(body), blocks, threads, named, opts)
    assert not found, "\n".join(found)


def test_a_whole_block_returning_before_a_shared_array_still_runs_as_lanes():
    same(TRICKY["a whole block returns early, the others meet a barrier"][2], True, blocks=3, threads=5)


# -- the watchdog's timeout while lanes run -------------------------------------------------------------
def timed_out(body: str, blocks, threads, seconds=0.2) -> list:
    """Both runs of an endless kernel under the watchdog: what differs, beside the events (how far
    each got is a matter of time) and the failure's line (where the spinning thread was)."""
    from lanes_pair import forced, fresh
    from tutor.engine.sim.launch import watchdog

    n = int(np.prod(blocks)) * int(np.prod(threads))
    named = [("out", np.zeros(n + 1, np.float32)), ("a", np.arange(n, dtype=np.float32)), ("n", n)]
    runs = []
    for enabled in (True, False):
        module = load_for_sim(HEAD + textwrap.dedent(body), "kernel.py")
        args = fresh(named)
        with forced(enabled):
            launch = Launch(module.kernel, blocks, threads, args, source_lines=module.lines)
            with watchdog(seconds, lambda launch=launch: launch):
                launch.run()
        runs.append((launch, args))
    (a, a_args), (b, b_args) = runs
    found = []
    where = [[(f.get("kind"), f.get("block"), f.get("thread")) for f in x.failures] for x in (a, b)]
    if where[0] != where[1]:
        found.append(f"failures differ: {a.failures} vs {b.failures}")
    if [vars(x) for x in a.trace.barriers] != [vars(x) for x in b.trace.barriers]:
        found.append(f"barriers differ: {len(a.trace.barriers)} vs {len(b.trace.barriers)}")
    if a.trace.stopped != b.trace.stopped:
        found.append(f"stopped threads differ: {len(a.trace.stopped)} vs {len(b.trace.stopped)}")
    if not np.array_equal(a_args[0][1], b_args[0][1]):
        found.append(f"out differs: {int((a_args[0][1] != 0).sum())} vs {int((b_args[0][1] != 0).sum())} cells set")
    return found


def test_a_timeout_in_one_block_agrees():
    assert not timed_out("""
        @cuda.jit
        def kernel(out, a, n):
            k = 0
            while n > 0:
                k += 1
        """, 1, 64)


def test_a_timeout_stops_the_threads_of_the_block_that_ran():
    found = timed_out("""
        @cuda.jit
        def kernel(out, a, n):
            k = 0
            while n > 0:
                k += 1
        """, 3, 64)
    assert not found, found


def test_a_timeout_keeps_the_barriers_passed():
    found = timed_out("""
        @cuda.jit
        def kernel(out, a, n):
            cuda.syncthreads()
            k = 0
            while n > 0:
                k += 1
        """, 1, 64)
    assert not found, found


def test_a_timeout_in_a_loop_that_reads():
    found = timed_out("""
        @cuda.jit
        def kernel(out, a, n):
            k = 0
            while a[0] < 1.0:
                k += 1
        """, 1, 64)
    assert not found, found


@pytest.mark.xfail(strict=True, reason="lanes differ: before a timeout, thread by thread only thread 0 wrote out "
                                       "(it spun first); the lanes wrote every thread's cell (and the group's blocks')")
def test_a_timeout_after_writes():
    found = timed_out("""
        @cuda.jit
        def kernel(out, a, n):
            out[cuda.grid(1)] = 1.0
            k = 0
            while n > 0:
                k += 1
        """, 1, 64)
    assert not found, found


# -- with each warp's runs of each line followed (LineRuns, as the verifier's modelled time) -----------
# Thread by thread, sys.settrace's line events give trace.line_runs ({warp key: {(phase, line, caller
# line, trip)}}) and the lines that ran; the lanes must give the same themselves. A loop header fires
# once at entry and once per jump back, a statement of several lines once per stretch, a device
# function's lines carry the caller's line, and the counts go on from launch to launch.
from tutor.engine.sim.linecounts import LineRuns  # noqa: E402
from tutor.engine.sim.launch import records, run_launch  # noqa: E402


def runs_differ(a, b) -> list[str]:
    """How two launches' line_runs differ: the first warp whose runs differ, with a few of each side's own."""
    from lanes_pair import _runs

    ra, rb = _runs(a.trace.line_runs), _runs(b.trace.line_runs)
    if ra == rb:
        return []
    w = min(w for w in set(ra) | set(rb) if ra.get(w) != rb.get(w))
    only_a = sorted(ra.get(w, set()) - rb.get(w, set()), key=repr)[:5]
    only_b = sorted(rb.get(w, set()) - ra.get(w, set()), key=repr)[:5]
    return [f"line_runs differ, warp {w}: (phase, line, caller, trip) in lanes only {only_a}, thread by thread only {only_b}"]


def counted_pair(source: str, blocks, threads, named, opts=None, times: int = 1) -> tuple:
    """`times` launches of the module's `kernel` on both simulators, each side on a module loaded
    afresh inside one LineRuns, as the verifier runs them (local arrays untraced, run_launch: a
    launch that needs the checked local arrays runs again). (the lanes' fallback reasons, one a
    launch; differences: the trace's, each launch's line_runs, and the lines that ran)."""
    from lanes_pair import forced, fresh

    sides = []
    for enabled in (True, False):
        module = load_for_sim(source, "kernel.py")
        args = fresh(named)
        done = []
        with forced(enabled), records(module.cuda, trace_local=False), \
                LineRuns(module.cuda, "kernel.py", source) as follow:
            for _ in range(times):
                done.append(run_launch(module.kernel, blocks, threads, args, source_lines=module.lines,
                                       **(opts or {})))
        sides.append((done, args, follow.lines))
    (la, aa, xa), (lb, ab, xb) = sides
    found = []
    for k, (a, b) in enumerate(zip(la, lb)):
        found += [f"launch {k + 1}: {d}" for d in differences(a, b, aa, ab) + runs_differ(a, b)]
    if xa != xb:
        found.append(f"lines that ran differ: {sorted(xa ^ xb)}")
    return [x.lanes_fallback for x in la], found


def counted(body: str, threads=8, blocks=1, n=None, times=1, out=None, a=None, shared_bytes=None,
            sample=None) -> tuple:
    """counted_pair on `body` (after the imports), launched with out, a, n as `pair` does."""
    per = int(np.prod(threads))
    n = int(np.prod(blocks)) * per if n is None else n
    out = np.zeros(n + 1, np.float32) if out is None else out
    a = (np.arange(n, dtype=np.float32) * 0.5 - 1) if a is None else a
    opts = {} if shared_bytes is None else {"shared_bytes": shared_bytes}
    if sample is not None:
        opts["sample"] = Sample(blocks=sample, seconds=None)
    return counted_pair(HEAD + textwrap.dedent(body), blocks, threads, [("out", out), ("a", a), ("n", n)],
                        opts, times=times)


def same_runs(body: str, lanes: bool | None = None, **launch):
    """The two simulators agree with LineRuns on; `lanes`: whether the (first) launch must have run as lanes."""
    fallbacks, found = counted(body, **launch)
    assert not found, f"lanes ran: {fallbacks}\n" + "\n".join(found)
    if lanes is not None:
        assert (fallbacks[0] is None) == lanes, fallbacks


RUNS_TRICKY = {
    "break, continue and statements after the loop": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            s = 0.0
            for k in range(i % 7):
                if k == 3:
                    break
                if k % 2 == 1:
                    continue
                s += a[k]
            out[i] = s
            s += 1.0
            out[i] += s
        """),
    "break at the first trip, and a loop of no trips": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            for k in range(5):
                break
            for k in range(i - i):
                out[i] = 2.0
            for k in range(i % 3):
                out[i] += 1.0
            out[i] += 0.5
        """),
    "an early return inside a loop": (dict(threads=40), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            for k in range(6):
                out[i] += 1.0
                if k == i % 5:
                    return
            out[i] = -1.0
        """),
    "nested loops with per-thread bounds, break in the inner": (dict(threads=64), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            s = 0
            for p in range(i % 4):
                for q in range(p, i % 6):
                    if q == 4:
                        break
                    s += q
                s += p
            while s > 3:
                for q in range(s % 3):
                    s -= 1
                s -= 2
            out[i] = s
        """),
    "while loops with conditions over several lines": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            k = 0
            while (k < i % 5 and
                   k < n):
                k += 1
            j = 0
            while (
                    j < i % 3):
                j += 1
            m = 0
            while m < 4 and (
                    m != i % 4 or
                    i > 20):
                m += 1
                if m == 2:
                    continue
                out[i] += 1.0
            out[i] += k + j + m
        """),
    "a loop over a tuple of constants": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            s = 0.0
            for x in (1, 2, 3):
                s += x * a[i]
                if x == 2 and i % 2:
                    break
            for y in (4,
                      5):
                s += y
            out[i] = s
        """),
    "statements and calls over several lines": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            x = (a[i] +
                 a[(i + 1) % n] *
                 2.0)
            cuda.atomic.add(
                out,
                n,
                1.0)
            out[
                i] = x if i % 2 else (
                    -x)
            y = min(x,
                    max(1.0, x))
            out[i] += y
        """),
    "if headers over several lines, and elif chains": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            if (i < 10 and
                    i % 2 == 0):
                out[i] = 1.0
            elif (i <
                  20):
                out[i] = 2.0
            elif i < 25:
                out[i] = 3.0
            elif i < 28:
                pass
            else:
                out[i] = 4.0
            if i > 30:
                pass
            out[i] += 1.0
        """),
    "device functions called from inside loops": (dict(threads=32), """
        @cuda.jit(device=True)
        def f(x):
            return x * 2.0
        @cuda.jit(device=True)
        def g(k, x):
            y = f(x)
            return y + k
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            s = 0.0
            for k in range(i % 4):
                s += f(a[i])
                for q in range(2):
                    s = g(q, s)
            out[i] = s
        """),
    "device functions with loops of their own": (dict(threads=32), """
        @cuda.jit(device=True)
        def total(a, m):
            s = 0.0
            for k in range(m):
                if k == 5:
                    break
                s += a[k]
            return s
        @cuda.jit(device=True)
        def first(a, m, v):
            k = 0
            while k < m:
                if a[k] > v:
                    return k
                k += 1
            return -1
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            out[i] = total(a, i % 8) + first(a, n, a[i] - 1.0)
            for r in range(2):
                out[i] += total(a, r + i % 3)
        """),
    "a device function of a statement over several lines": (dict(threads=32), """
        @cuda.jit(device=True)
        def f(x):
            return x + 1.0
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            out[i] = (f(a[i]) +
                      f(2.0))
        """),
    "a device function whose one statement spans lines, called twice in a line": (dict(threads=32), """
        @cuda.jit(device=True)
        def f(x):
            return (x +
                    1.0)
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            out[i] = f(a[i]) + f(2.0)
        """),
    "pass, docstrings and a string statement": (dict(threads=32), '''
        @cuda.jit(device=True)
        def f(x):
            """Twice x."""
            return x * 2.0
        @cuda.jit
        def kernel(out, a, n):
            """A kernel with a docstring."""
            i = cuda.threadIdx.x
            "a string as a statement"
            for k in range(3):
                pass
            if i % 2:
                pass
            else:
                out[i] = f(a[i])
            pass
        '''),
    "blocks of different barrier counts": (dict(threads=32, blocks=3), """
        @cuda.jit
        def kernel(out, a, n):
            t = cuda.threadIdx.x
            b = cuda.blockIdx.x
            s = cuda.shared.array(32, numba.float32)
            s[t] = a[b * 32 + t]
            for k in range(b):
                cuda.syncthreads()
                s[t] += 1.0
            cuda.syncthreads()
            out[b * 32 + t] = s[31 - t]
        """),
    "warp shuffles in a loop over a tuple": (dict(threads=64), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            v = a[i]
            for off in (16, 8, 4, 2, 1):
                v += cuda.shfl_xor_sync(0xffffffff, v, off)
            out[i] = v
            w = cuda.shfl_xor_sync(0xffffffff,
                                   v, 1)
            out[i] += w
        """),
    "a for loop with else": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            for k in range(4):
                if k == i % 6:
                    break
            else:
                out[i] = 1.0
            out[i] += 1.0
        """),
    "while True with a break": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            k = 0
            while True:
                k += 1
                if k > i % 5:
                    break
            out[i] = k
        """),
    "a device function called in an if header": (dict(threads=32), """
        @cuda.jit(device=True)
        def f(x):
            return x * 2
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            if f(i) > 10:
                out[i] = 1.0
            k = 0
            while f(k) < i % 5:
                k += 1
            for q in range(f(i % 3)):
                out[i] += 1.0
        """),
    "docstrings only (no string statement)": (dict(threads=32), '''
        @cuda.jit(device=True)
        def f(x):
            """Twice x."""
            return x * 2.0
        @cuda.jit
        def kernel(out, a, n):
            """A kernel."""
            i = cuda.threadIdx.x
            out[i] = f(a[i])
        '''),
    "multi-line for header": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            for k in range(
                    i % 3):
                out[i] += 1.0
            for x in (
                    1, 2):
                out[i] += x
        """),
    "two calls in one line in a loop": (dict(threads=32), """
        @cuda.jit(device=True)
        def f(x):
            return x * 2.0
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            s = 0.0
            for k in range(i % 3):
                s += f(k) + f(k + 1)
            out[i] = s
        """),
    "conditional expression over lines": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            x = (a[i] if i % 2 else
                 a[0])
            y = (i > 3 and
                 i < 9 or
                 i == 20)
            out[i] = x + y
        """),
    "barriers in a loop": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            s = cuda.shared.array(64, numba.float32)
            s[i] = a[i]
            for k in range(3):
                cuda.syncthreads()
                if i % 2:
                    s[i] += 1.0
                cuda.syncthreads()
            out[i] = s[(i + 1) % 32]
        """),
    "return at the end, and in an if at the end": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            out[i] = 1.0
            if i % 3 == 0:
                out[i] = 2.0
                return
            return
        """),
    "continue at the end of a while": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            k = 0
            while k < i % 6:
                k += 1
                if k % 2:
                    continue
            j = 0
            while 1:
                j += 1
                if j >= i % 4:
                    break
                continue
            out[i] = k + j
        """),
    "multi-line augmented assignment in a loop with break": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            for k in range(5):
                out[i] += (
                    a[k] *
                    2.0)
                if (k >=
                        i % 4):
                    break
        """),
    "device function returning from inside a nested loop, called from a loop": (dict(threads=32), """
        @cuda.jit(device=True)
        def find(a, v, m):
            for p in range(m):
                for q in range(p, m):
                    if a[q] - a[p] > v:
                        return q
            return -1
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            for r in range(1 + i % 2):
                out[i] += find(a, 0.5 * (i % 5) + r, 6)
        """),
    "device function called from a device function in a loop": (dict(threads=32), """
        @cuda.jit(device=True)
        def sq(x):
            return x * x
        @cuda.jit(device=True)
        def norm(a, m):
            s = 0.0
            k = 0
            while k < m:
                s += sq(a[k])
                k += 1
            return s
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            for r in range(i % 3):
                out[i] += norm(a, r + 1)
            out[i] += sq(2.0)
        """),
    "shuffle with a per-thread loop around it": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            v = a[i]
            off = 16
            while off > 0:
                v += cuda.shfl_xor_sync(0xffffffff, v, off)
                off //= 2
            out[i] = v
            out[i] += cuda.shfl_down_sync(0xffffffff,
                                          v,
                                          1)
        """),
    "string statement in a device function": (dict(threads=32), """
        @cuda.jit(device=True)
        def f(x):
            y = x + 1.0
            "a note"
            return y
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            out[i] = f(a[i])
        """),
}

TWICE = {
    "a kernel launched twice: the counts go on": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            for k in range(i % 3):
                out[i] += 1.0
            out[i] += (1.0 +
                       2.0)
        """),
    "a kernel of one statement over lines, launched twice": (dict(threads=32), """
        @cuda.jit
        def kernel(out, a, n):
            out[cuda.threadIdx.x] += (
                1.0)
        """),
}


def counted_seeds(gen_class, seeds) -> tuple[list, Counter]:
    """Generated kernels' launches with LineRuns on: (differences, fallback reasons of the correct ones)."""
    differ: list = []
    correct: Counter = Counter()
    for seed in seeds:
        gen = gen_class(seed)
        for label, blocks, threads, named, *opts in gen.launches:
            fallbacks, found = counted_pair(gen.source, blocks, threads, named, opts[0] if opts else None)
            if not gen.buggy:
                correct[fallbacks[0]] += 1
            if found:
                differ.append(described(seed, gen, label, found))
    return differ, correct


RUNS_SEEDS = 100  # about 5 s with -n 0
RUNS_GROUP_SEEDS = 16  # about 8 s


@pytest.mark.parametrize("first", range(0, RUNS_SEEDS, BATCH), ids=lambda f: f"seeds{f}-{f + BATCH - 1}")
def test_generated_kernels_count_the_same_line_runs_as_lanes(first):
    differ, correct = counted_seeds(KernelGen, list(range(first, first + BATCH)))
    assert not differ, f"{len(differ)} launches differ; the first:\n{differ[0]}"
    ran, total = correct[None], sum(correct.values())
    assert total >= 10 and ran >= 0.6 * total, f"{ran} of {total} correct launches ran as lanes:\n{tally(correct)}"


def test_generated_kernels_of_several_blocks_count_the_same_line_runs_as_lanes():
    differ, correct = counted_seeds(GroupGen, list(range(RUNS_GROUP_SEEDS)))
    assert not differ, f"{len(differ)} launches differ; the first:\n{differ[0]}"
    assert correct[None] >= 2, tally(correct)


@pytest.mark.skipif(not os.environ.get("LANES_GEN_SEEDS"), reason="set LANES_GEN_SEEDS=N to run N more seeds")
@pytest.mark.parametrize("gen_class", [KernelGen, GroupGen], ids=["kernel", "group"])
def test_many_generated_kernels_count_the_same_line_runs(gen_class):
    start = int(os.environ.get("LANES_GEN_START", "100000"))
    differ, correct = counted_seeds(gen_class, range(start, start + int(os.environ["LANES_GEN_SEEDS"])))
    print(f"correct launches:\n{tally(correct)}")
    assert not differ, f"{len(differ)} launches differ; the first three:\n" + "\n".join(differ[:3])


@pytest.mark.parametrize("name", list(TRICKY))
def test_tricky_kernels_count_the_same_line_runs(name):
    launch, _, body = TRICKY[name]
    same_runs(body, **launch)


@pytest.mark.parametrize("name", list(GROUP_TRICKY))
def test_tricky_kernels_of_several_blocks_count_the_same_line_runs(name):
    launch, body = GROUP_TRICKY[name]
    same_runs(body, **launch)


# where the lanes fall back (beside them all run as lanes): a string statement, a loop's else, a device
# function called in a statement of several lines
RUNS_FALL_BACK = {"pass, docstrings and a string statement", "a for loop with else", "string statement in a device function",
                  "a device function of a statement over several lines"}


@pytest.mark.parametrize("name", list(RUNS_TRICKY))
def test_kernels_that_attack_line_runs(name):
    launch, body = RUNS_TRICKY[name]
    same_runs(body, name not in RUNS_FALL_BACK, **launch)


@pytest.mark.parametrize("name", list(TWICE))
def test_a_kernel_launched_twice_counts_on(name):
    launch, body = TWICE[name]
    fallbacks, found = counted(body, times=2, **launch)
    assert not found, "\n".join(found)
    assert fallbacks[0] is None, fallbacks


# -- where the lanes once counted other line runs (each the smallest kernel that showed it) ---------------
# Python reports a line once however many statements it holds: a one-line `if c: x`, `for ...: x`,
# `while ...: x` or `x; y` is one line event (the loop's header once at entry and at each jump back,
# a one-line while's once fewer: its jump back goes to the body, on the same line), where the lanes
# count each statement of the line as a run of it.
@pytest.mark.parametrize("body", [
    """
    @cuda.jit
    def kernel(out, a, n):
        i = cuda.threadIdx.x
        if i % 2: out[i] = 1.0
    """,  # lanes only (0, 9, 0, 2)
    """
    @cuda.jit
    def kernel(out, a, n):
        for k in range(2): pass
    """,  # the header's trips: lanes also (4,) and (5,)
    """
    @cuda.jit
    def kernel(out, a, n):
        i = cuda.threadIdx.x
        k = 0
        while k < i % 4: k += 1
    """,  # lanes also (4,) to (7,)
    """
    @cuda.jit
    def kernel(out, a, n):
        i = cuda.threadIdx.x; out[i] = 1.0
    """,  # lanes only (0, 8, 0, 2)
], ids=["one-line if", "one-line for", "one-line while", "two statements on a line"])
def test_a_line_of_several_statements_counts_once(body):
    same_runs(body, threads=32)


def test_an_if_header_over_lines_with_its_body_on_the_last():
    same_runs("""
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.threadIdx.x
            if (i <
                    n): out[i] = 1.0
        """, threads=32)  # thread by thread only (0, 9, 0, 2) and (0, 10, 0, 2)


def test_blocks_one_by_one_then_a_fallback_keep_no_counts():
    # together: block 1 reads out[0] before block 0 writes it (the order check), so block by block;
    # block 0 runs as lanes, then block 1 (which now reads 1.0) has a range() step differing by thread
    same_runs("""
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.grid(1)
            x = out[0] if i >= 32 else 0.0
            if i == 0:
                out[0] = 1.0
            for k in range(0, 4, 1 + int(x) * (i % 2)):
                out[i + 1] += 1.0
        """, blocks=2, threads=32)  # lanes (0, 7, 0, 2), (0, 8, 0, 2), ... for warp 0; thread by thread trip 1


# -- integer local arrays (the verifier's runs): stores truncate and wrap as the checked array's do -----
INT_LOCALS = {
    "an int32 cell wraps past 2**31 - 1": (True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.grid(1)
            c = cuda.local.array(4, numba.int32)
            c[0] = 2147483647
            c[0] += i + 1
            out[i] = c[0]
        """),
    "a float stored into an int cell is truncated toward zero": (True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.grid(1)
            c = cuda.local.array(2, numba.int32)
            c[1] = a[i] * 1.7
            out[i] = c[1] * 2
        """),
    "an int8 cell wraps, a uint8 cell too": (True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.grid(1)
            d = cuda.local.array(3, numba.int8)
            u = cuda.local.array(3, numba.uint8)
            d[0] = i * 50
            u[2] = i * 50 - 300
            out[i] = d[0] + u[2]
        """),
    "cells written in some lanes, read where written": (True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.grid(1)
            c = cuda.local.array(4, numba.int32)
            if i % 2 == 0:
                c[2] = i * 3
            c[1] = i
            if i % 2 == 0:
                out[i] = c[2] + c[1]
            else:
                out[i] = c[1]
        """),
    "a cell read where no lane wrote it (the checked run judges)": (False, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.grid(1)
            c = cuda.local.array(4, numba.int32)
            if i % 3 == 0:
                c[0] = i
            out[i] = c[0]
        """),
    "an index taken from an int cell, 2-D, in a loop": (True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.grid(1)
            c = cuda.local.array((2, 3), numba.int64)
            for k in range(3):
                c[k % 2, k] = (i + k * 5) % n
            s = 0.0
            for k in range(3):
                s += a[c[k % 2, k]]
            out[i] = s
        """),
    "int and float local arrays side by side, summed in a loop": (True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.grid(1)
            doc = cuda.local.array(4, numba.int32)
            acc = cuda.local.array(4, numba.float32)
            for k in range(4):
                doc[k] = (i + k) // 3
                acc[k] = a[(i + k) % n]
            s = 0.0
            for k in range(4):
                if doc[k] == doc[0]:
                    s += acc[k]
            out[i] = s
        """),
    "a bool local array": (True, """
        @cuda.jit
        def kernel(out, a, n):
            i = cuda.grid(1)
            b = cuda.local.array(2, numba.boolean)
            b[0] = i % 3
            b[1] = a[i] > 0
            if b[0] and b[1]:
                out[i] = 1.0
            else:
                out[i] = 2.0
        """),
}


@pytest.mark.parametrize("name", list(INT_LOCALS))
def test_integer_local_arrays_run_as_lanes_and_agree(name):
    # On 2b9afa5 every one of these fell back ("an integer local array") to the thread-by-thread run.
    lanes, body = INT_LOCALS[name]
    same_runs(body, lanes, threads=32, blocks=2)


# cuda.shared.array / cuda.local.array with Numba's `alignment` (16 lets the compiler merge four
# neighbouring float32 loads into one ld.shared.v4.f32, which the experts rely on). On 2b0c1e4
# the keyword made the lanes fall back ("a call with keywords") and the thread-by-thread run raise
# a TypeError.
ALIGNED = {
    "keyword": """
        @cuda.jit
        def kernel(out, a, n):
            s = cuda.shared.array(64, numba.float32, alignment=16)
            r = cuda.local.array(4, numba.float32, alignment=16)
            t = cuda.threadIdx.x
            s[t] = a[t]
            cuda.syncthreads()
            base = (t // 4) * 4
            for j in range(4):
                r[j] = s[base + j]
            out[cuda.grid(1)] = r[0] + r[1] * 2.0 + r[2] * 3.0 + r[3] * 4.0
        """,
    "positional": """
        @cuda.jit
        def kernel(out, a, n):
            s = cuda.shared.array((2, 32), numba.float32, 32)
            t = cuda.threadIdx.x
            s[t // 32, t % 32] = a[t]
            cuda.syncthreads()
            out[cuda.grid(1)] = s[(t + 1) // 32 % 2, (t + 1) % 32]
        """,
}


@pytest.mark.parametrize("name", list(ALIGNED))
def test_an_aligned_array_runs_as_lanes_and_agrees(name):
    same_runs(ALIGNED[name], True, threads=64, blocks=2)


@pytest.mark.parametrize("alignment", ["12", "4", "0", "-16", "1.5", "True"])
def test_a_wrong_alignment_is_named_by_both_runs(alignment):
    body = f"""
        @cuda.jit
        def kernel(out, a, n):
            s = cuda.shared.array(64, numba.float32, alignment={alignment})
            s[cuda.threadIdx.x] = 1.0
            out[cuda.threadIdx.x] = s[cuda.threadIdx.x]
        """
    fallbacks, found = pair(body, threads=32)[0][1:]
    assert not found, found
    assert fallbacks == "an invalid alignment"
    from tutor.engine.judge import simulate
    _, failures = simulate(HEAD + textwrap.dedent(body), 1, 32,
                           [("out", np.zeros(33, np.float32)), ("a", np.zeros(32, np.float32)), ("n", 32)])
    assert failures, "a wrong alignment ran"
    text = " ".join(f.message for f in failures)
    assert "alignment must be" in text and failures[0].line == 8, [(f.kind, f.line, f.message) for f in failures]
