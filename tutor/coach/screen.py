"""Static screen of a coach candidate module (AST only; the source is never run).

A candidate is a Python module holding ``@cuda.jit`` kernels (and optional
``@cuda.jit(device=True)`` helpers), module-level numeric constants, and exactly
one host function ``launch(out, *inputs)`` that sizes the grid with integer
arithmetic, may allocate device scratch arrays, and launches kernels.

``screen(source)`` returns one :class:`ScreenFinding` per problem; an empty list
means the candidate passed the static screen (it still has to pass the runtime
checks).  The rules target the tricks LLM-written kernels are known to use to
pass a harness: patching the checker or the timer, caching results between
calls, computing on the host, hiding work on another stream, dropping to half
precision, and escaping through ``exec``/``getattr``/``__import__``.

Rule ids
--------
syntax, import, builtin, dunder, try, with, global, class, lambda, nested-def,
async, yield, attr-assign, module-state, module-code, decorator, host-function,
default-arg, launch-missing, launch-duplicate, launch-signature,
launch-decorated, launch-stmt, launch-expr, launch-call, launch-config,
launch-loop, launch-return, host-copy, host-numpy, host-read, host-write,
stream, sync, event, print, kernel-host-api, kernel-numpy, float16, internals.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["ScreenFinding", "screen", "RULES"]


@dataclass(frozen=True)
class ScreenFinding:
    """One reason to reject a candidate.

    ``message`` says what is wrong and on which line; ``fix`` says what to do.
    """

    rule: str
    line: int
    col: int
    message: str
    fix: str
    filename: str = "candidate.py"
    kind: str = "static"

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col + 1}: [{self.rule}] {self.message} Fix: {self.fix}"


# ---------------------------------------------------------------------------
# Vocabulary

RULES: dict[str, str] = {
    "syntax": "the candidate does not parse",
    "import": "only numba, math and numpy may be imported, at the top of the module",
    "builtin": "exec/eval/compile/__import__/open/globals/locals/vars/getattr/setattr/delattr are forbidden",
    "dunder": "dunder attributes (__dict__, __globals__, ...) are forbidden",
    "try": "no try/except/finally",
    "with": "no with statements",
    "global": "no global/nonlocal",
    "class": "no classes",
    "lambda": "no lambdas",
    "nested-def": "no functions defined inside functions",
    "async": "no async code",
    "yield": "no generators",
    "attr-assign": "no assignment to attributes of modules or non-local objects",
    "module-state": "module-level assignments must be literal constants or dtype names",
    "module-code": "no module-level code besides imports, constants, defs and docstrings",
    "decorator": "kernels use exactly one @cuda.jit decorator with plain options",
    "host-function": "launch is the only host function",
    "default-arg": "parameter defaults must be literal constants",
    "launch-missing": "the module must define launch(out, *inputs)",
    "launch-duplicate": "exactly one launch function",
    "launch-signature": "launch takes at least one parameter",
    "launch-decorated": "launch must not be decorated",
    "launch-stmt": "launch may only assign sizes, allocate scratch, launch kernels, loop over range, branch on sizes, return",
    "launch-expr": "launch expressions are limited to size arithmetic",
    "launch-call": "launch may only call len/min/max/int/abs/math.ceil/floor, cuda.device_array(_like) and kernels",
    "launch-config": "kernel launches are written kern[grid, block](args)",
    "launch-loop": "launch loops are for-loops over range(...)",
    "launch-return": "launch returns nothing",
    "host-copy": "no host<->device copies",
    "host-numpy": "no numpy computation on the host",
    "host-read": "no reading device array elements on the host",
    "host-write": "no writing into arrays on the host",
    "stream": "no extra streams (or 3rd/4th launch-config element)",
    "sync": "no cuda.synchronize",
    "event": "no cuda events",
    "print": "no print",
    "kernel-host-api": "kernels may not call host APIs",
    "kernel-numpy": "kernels may not call numpy functions (only dtype casts)",
    "float16": "no half precision (float16/fp16/bf16)",
    "internals": "no numba/CUDA driver internals",
}

ALLOWED_IMPORT_MODULES = {
    "numba",
    "numba.cuda",
    "numba.types",
    "numba.core.types",
    "numba.cuda.libdevice",
    "numba.cuda.random",
    "math",
    "numpy",
    "__future__",
}

DTYPE_NAMES = {
    "float32", "float64", "float_", "double", "single", "longdouble",
    "int8", "int16", "int32", "int64", "int_", "intp", "intc", "long", "longlong",
    "uint8", "uint16", "uint32", "uint64", "uint", "uintp", "uintc", "ulonglong",
    "byte", "ubyte", "short", "ushort",
    "bool_", "boolean", "b1", "bool",
    "complex64", "complex128", "complex_", "csingle", "cdouble",
    "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "c8", "c16",
    "void", "none",
}
DTYPE_PREFIXES = {"numpy", "numba", "numba.types", "numba.core.types"}
HALF_NAMES = {"float16", "half", "fp16", "bf16", "bfloat16", "f2", "float16x2", "half2"}
HALF_STRING_LOOSE = re.compile(r"(float16|bfloat16|\bhalf\b|\bf2\b|\bfp16\b|\bbf16\b)")
NUMPY_CONSTANTS = {"pi", "e", "inf", "nan", "euler_gamma", "newaxis"}
MATH_CONSTANTS = {"math.pi", "math.e", "math.inf", "math.nan", "math.tau"}

FORBIDDEN_BUILTINS = {
    "__import__", "exec", "eval", "compile", "open", "globals", "locals", "vars",
    "getattr", "setattr", "delattr", "breakpoint", "input", "__builtins__",
    "__loader__", "__spec__", "exit", "quit", "help", "memoryview", "type",
}

# `from numba.cuda import X` / `from numba import X`: names that open internals.
INTERNAL_NAMES = {
    "cudadrv", "driver", "simulator", "cudaimpl", "testing", "api", "dispatcher",
    "compiler", "descriptor", "target", "core", "config", "extending", "misc",
    "objmode", "typed", "np", "runtime", "cext", "decorators", "codegen",
}
INTERNAL_PREFIXES = (
    "numba.cuda.cudadrv", "numba.cuda.driver", "numba.cuda.simulator",
    "numba.cuda.cudaimpl", "numba.cuda.testing", "numba.cuda.api",
    "numba.cuda.dispatcher", "numba.cuda.compiler", "numba.cuda.codegen",
    "numba.cuda.descriptor", "numba.cuda.target", "numba.cuda.runtime",
    "numba.cuda.core", "numba.config", "numba.extending", "numba.misc",
    "numba.testing", "numba.np", "numba.typed", "numba.objmode", "numba.experimental",
)

SCRATCH_CALLS = {"numba.cuda.device_array", "numba.cuda.device_array_like"}
HOST_COPY_CALLS = {
    "numba.cuda.to_device", "numba.cuda.pinned_array", "numba.cuda.mapped_array",
    "numba.cuda.managed_array", "numba.cuda.pinned", "numba.cuda.mapped",
    "numba.cuda.pinned_array_like", "numba.cuda.mapped_array_like",
    "numba.cuda.as_cuda_array", "numba.cuda.from_cuda_array_interface",
    "numba.cuda.device_array_like_host",
}
HOST_COPY_METHODS = {"copy_to_host", "copy_to_device", "to_host", "tolist", "item", "__array__"}
STREAM_CALLS = {
    "numba.cuda.stream", "numba.cuda.default_stream", "numba.cuda.external_stream",
    "numba.cuda.per_thread_default_stream", "numba.cuda.legacy_default_stream",
}
SYNC_CALLS = {"numba.cuda.synchronize"}
EVENT_CALLS = {"numba.cuda.event", "numba.cuda.event_elapsed_time"}
KERNEL_HOST_APIS = (
    SCRATCH_CALLS | HOST_COPY_CALLS | STREAM_CALLS | SYNC_CALLS | EVENT_CALLS
    | {"numba.cuda.get_current_device", "numba.cuda.select_device",
       "numba.cuda.close", "numba.cuda.profile_start", "numba.cuda.profile_stop",
       "numba.cuda.device_array_like", "numba.cuda.jit"}
)
LAUNCH_SIZE_CALLS = {"len", "min", "max", "int", "abs", "math.ceil", "math.floor",
                     "math.log2", "math.isqrt", "math.sqrt", "math.trunc"}
JIT_OPTIONS = {"device", "fastmath", "inline", "forceinline", "lineinfo", "debug",
               "opt", "max_registers", "boundscheck", "cache"}
SIZE_ATTRS = {"shape", "size", "ndim", "dtype"}
ARITH_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
             ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor)


# ---------------------------------------------------------------------------


def screen(source: str, filename: str = "candidate.py") -> list[ScreenFinding]:
    """Screen a candidate's source; return the findings (empty: it passed)."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:  # the screen itself may use try; candidates may not
        line = exc.lineno or 1
        return [ScreenFinding(
            "syntax", line, max((exc.offset or 1) - 1, 0),
            f"line {line}: the candidate does not parse ({exc.msg}).",
            "return a complete, valid Python module.", filename)]
    return _Screen(tree, filename).run()


class _Screen:
    def __init__(self, tree: ast.Module, filename: str):
        self.tree = tree
        self.filename = filename
        self.findings: list[ScreenFinding] = []
        self._seen: set[tuple[str, int, int]] = set()
        self.aliases: dict[str, str] = {}      # local name -> dotted import path
        self.kernels: set[str] = set()          # launchable @cuda.jit kernels
        self.device_fns: set[str] = set()       # @cuda.jit(device=True) helpers
        self.constants: set[str] = set()        # module-level constant names

    # -- reporting ---------------------------------------------------------
    def report(self, node: ast.AST, rule: str, what: str, fix: str) -> None:
        line = getattr(node, "lineno", 1) or 1
        col = getattr(node, "col_offset", 0) or 0
        key = (rule, line, col)
        if key in self._seen:
            return
        self._seen.add(key)
        self.findings.append(ScreenFinding(rule, line, col, f"line {line}: {what}.", fix, self.filename))

    # -- names -------------------------------------------------------------
    def qualname(self, node: ast.AST) -> str | None:
        """Dotted import path an expression names (``np.float32`` -> ``numpy.float32``)."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def is_dtype(self, node: ast.AST) -> bool:
        q = self.qualname(node)
        if not q or "." not in q:
            return False
        prefix, _, last = q.rpartition(".")
        return prefix in DTYPE_PREFIXES and last in DTYPE_NAMES

    @staticmethod
    def src_name(node: ast.AST) -> str:
        try:
            return ast.unparse(node)
        except Exception:  # pragma: no cover - unparse is total on parsed trees
            return type(node).__name__

    # -- driver --------------------------------------------------------------
    def run(self) -> list[ScreenFinding]:
        self.collect_imports()
        self.generic_walk()
        self.module_level()
        self.findings.sort(key=lambda f: (f.line, f.col, f.rule))
        return self.findings

    # -- imports -------------------------------------------------------------
    def collect_imports(self) -> None:
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Import):
                for a in stmt.names:
                    if a.asname:
                        self.aliases[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.aliases[top] = top
            elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                for a in stmt.names:
                    if a.name != "*":
                        self.aliases[a.asname or a.name] = f"{stmt.module}.{a.name}"

    def check_import(self, stmt: ast.Import | ast.ImportFrom, top_level: bool) -> None:
        fix_top = "import only numba (e.g. `from numba import cuda, float32`), math and numpy, at the top of the module."
        if not top_level:
            self.report(stmt, "import", "imports inside functions or blocks are not allowed", fix_top)
            return
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                self._check_module(stmt, a.name, fix_top)
            return
        module = stmt.module or ""
        if stmt.level:
            self.report(stmt, "import", f"relative import `from {'.' * stmt.level}{module} import ...` is not allowed", fix_top)
            return
        if not self._check_module(stmt, module, fix_top):
            return
        for a in stmt.names:
            if a.name == "*":
                self.report(stmt, "import", f"`from {module} import *` is not allowed", "import the names you use explicitly.")
            elif a.name in HALF_NAMES:
                self.report(stmt, "float16", f"`from {module} import {a.name}` brings in half precision",
                            "compute in float32 (numba.float32) like the reference.")
            elif module in ("numba", "numba.cuda") and a.name in INTERNAL_NAMES:
                self.report(stmt, "internals", f"`from {module} import {a.name}` reaches into numba/CUDA internals",
                            "use only the public kernel API: cuda.jit, cuda.grid, cuda.shared/local.array, atomics, shuffles.")
            elif module == "numpy" and a.name not in DTYPE_NAMES | NUMPY_CONSTANTS:
                self.report(stmt, "import", f"`from numpy import {a.name}`: numpy is only allowed for dtypes",
                            "import numpy as np and use only dtype objects such as np.float32.")

    def _check_module(self, node: ast.AST, module: str, fix: str) -> bool:
        if any(module == p or module.startswith(p + ".") for p in INTERNAL_PREFIXES):
            self.report(node, "internals", f"import of `{module}` reaches into numba/CUDA internals", fix)
            return False
        if module.split(".")[-1] in HALF_NAMES:
            self.report(node, "float16", f"import of `{module}` brings in half precision",
                        "compute in float32 (numba.float32) like the reference.")
            return False
        if module not in ALLOWED_IMPORT_MODULES:
            self.report(node, "import", f"import of `{module}` is forbidden", fix)
            return False
        return True

    # -- rules that hold everywhere -------------------------------------------
    def generic_walk(self) -> None:
        top = set(map(id, self.tree.body))
        in_jit: set[int] = set()  # kernels check their own attribute stores
        for stmt in self.tree.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.decorator_list and stmt.name != "launch":
                in_jit.update(map(id, ast.walk(stmt)))
        for node in ast.walk(self.tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del))
                    and id(node) not in in_jit):
                self.attr_assign_report(node, "outside a kernel")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.check_import(node, id(node) in top)
            elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                self.report(node, "try", "try/except/finally is not allowed (no silent fallbacks)",
                            "remove the try block; let errors surface so the verifier sees them.")
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                self.report(node, "with", "`with` statements are not allowed",
                            "remove the with block; launch kernels directly from launch().")
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                kw = "global" if isinstance(node, ast.Global) else "nonlocal"
                self.report(node, "global", f"`{kw} {', '.join(node.names)}` keeps state between calls",
                            "keep all state in local variables; every call must recompute from its inputs.")
            elif isinstance(node, ast.ClassDef):
                self.report(node, "class", f"class `{node.name}` is not allowed",
                            "use @cuda.jit kernels, @cuda.jit(device=True) helpers and one launch() function.")
            elif isinstance(node, ast.Lambda):
                self.report(node, "lambda", "lambdas are not allowed",
                            "write a named @cuda.jit(device=True) helper instead.")
            elif isinstance(node, (ast.AsyncFunctionDef, ast.Await, ast.AsyncFor)):
                self.report(node, "async", "async code is not allowed", "make launch() a plain function.")
            elif isinstance(node, (ast.Yield, ast.YieldFrom)):
                self.report(node, "yield", "generators are not allowed (a generator launch() runs nothing)",
                            "launch kernels directly and return nothing.")
            elif isinstance(node, ast.Name) and node.id in FORBIDDEN_BUILTINS:
                self.report(node, "builtin", f"`{node.id}` is forbidden",
                            "call kernels and cuda APIs by name; no dynamic code, reflection or file access.")
            elif isinstance(node, ast.Attribute):
                self.check_attribute(node)
            elif isinstance(node, ast.Call):
                self.check_string_args(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for child in ast.walk(node):
                    if child is not node and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.report(child, "nested-def", f"function `{child.name}` is defined inside `{node.name}`",
                                    "define helpers at module level with @cuda.jit(device=True).")
                self.check_defaults(node)

    def check_attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__") and node.attr.endswith("__"):
            self.report(node, "dunder", f"dunder attribute `{self.src_name(node)}` is forbidden",
                        "use only ordinary attributes such as .shape, .size, cuda.threadIdx.x.")
            return
        q = self.qualname(node)
        if q and any(q == p or q.startswith(p + ".") for p in INTERNAL_PREFIXES):
            self.report(node, "internals", f"`{self.src_name(node)}` reaches into numba/CUDA internals",
                        "use only the public kernel API: cuda.jit, cuda.grid, shared/local arrays, atomics, shuffles.")
        elif node.attr in HALF_NAMES:
            self.report(node, "float16", f"`{self.src_name(node)}` uses half precision",
                        "compute in float32 (numba.float32) like the reference.")

    def check_string_args(self, call: ast.Call) -> None:
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            for sub in ast.walk(arg):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    s = sub.value.strip()
                    if HALF_STRING_LOOSE.search(s) or s in ("e", "<f2", "=f2", "f2"):
                        self.report(sub, "float16", f"string {s!r} names a half-precision type",
                                    "compute in float32 (numba.float32) like the reference.")

    def check_defaults(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for d in [*fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)]:
            if not (isinstance(d, ast.Constant) and isinstance(d.value, (int, float, bool, type(None)))):
                self.report(d, "default-arg", f"parameter default `{self.src_name(d)}` of `{fn.name}` is not a literal number (a mutable default keeps state between calls)",
                            "drop the default or use a literal number.")

    # -- module level ----------------------------------------------------------
    def module_level(self) -> None:
        body = self.tree.body
        launches: list[ast.FunctionDef] = []
        functions: list[tuple[ast.FunctionDef, str]] = []
        for i, stmt in enumerate(body):
            if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Try, ast.With, ast.AsyncWith,
                                 ast.Global, ast.Nonlocal, ast.ClassDef, ast.AsyncFunctionDef)):
                continue  # handled by the generic walk
            if getattr(ast, "TryStar", None) and isinstance(stmt, ast.TryStar):
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                continue  # docstring / string literal
            if isinstance(stmt, ast.FunctionDef):
                role = self.classify_function(stmt)
                functions.append((stmt, role))
                if stmt.name == "launch":
                    launches.append(stmt)
                continue
            if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                self.module_assign(stmt)
                continue
            self.report(stmt, "module-code", f"module-level `{type(stmt).__name__.lower()}` statement is not allowed",
                        "keep the module to imports, constants (e.g. TPB = 256), @cuda.jit functions and launch(); put work in kernels.")

        for fn, role in functions:
            if role == "kernel" or role == "device":
                self.check_kernel(fn)
            elif role == "host" and fn.name != "launch":
                self.report(fn, "host-function", f"host function `{fn.name}` is not allowed",
                            "make it a @cuda.jit(device=True) helper, or inline it into launch().")
        if not launches:
            self.report(self.tree.body[0] if body else self.tree, "launch-missing",
                        "the module defines no `launch` function",
                        "define exactly one undecorated `def launch(out, *inputs):` that launches the kernels.")
            return
        for extra in launches[1:]:
            self.report(extra, "launch-duplicate", "a second `launch` function is defined (only the last one would run)",
                        "keep exactly one launch function.")
        for fn in launches:
            if fn.decorator_list:
                self.report(fn, "launch-decorated", "`launch` is decorated",
                            "remove the decorator; launch is a plain host function.")
                continue
            a = fn.args
            if not (a.posonlyargs or a.args or a.vararg):
                self.report(fn, "launch-signature", "`launch` takes no parameters",
                            "write `def launch(out, *inputs):` (device arrays in, output first).")
            if a.kwarg or a.kwonlyargs:
                self.report(fn, "launch-signature", "`launch` takes keyword-only or **kwargs parameters",
                            "write `def launch(out, *inputs):` with positional parameters only.")
            _LaunchChecker(self, fn).run()

    def classify_function(self, fn: ast.FunctionDef) -> str:
        """'kernel', 'device', 'host' (undecorated) or 'bad' (wrong decorator)."""
        if not fn.decorator_list:
            return "host"
        if fn.name == "launch":
            return "bad"
        if len(fn.decorator_list) > 1:
            self.report(fn.decorator_list[1], "decorator", f"`{fn.name}` has more than one decorator",
                        "use a single @cuda.jit or @cuda.jit(device=True).")
            return "bad"
        dec = fn.decorator_list[0]
        target = dec.func if isinstance(dec, ast.Call) else dec
        if self.qualname(target) != "numba.cuda.jit":
            self.report(dec, "decorator", f"decorator `@{self.src_name(dec)}` on `{fn.name}` is not @cuda.jit",
                        "decorate kernels with @cuda.jit and helpers with @cuda.jit(device=True).")
            return "bad"
        device = False
        if isinstance(dec, ast.Call):
            for kw in dec.keywords:
                if kw.arg not in JIT_OPTIONS:
                    self.report(kw.value if kw.arg else dec, "decorator", f"option `{kw.arg or '**'}` of @cuda.jit on `{fn.name}` is not allowed",
                                f"use only these options: {', '.join(sorted(JIT_OPTIONS))}.")
                elif not isinstance(kw.value, ast.Constant):
                    self.report(kw.value, "decorator", f"option `{kw.arg}` of @cuda.jit on `{fn.name}` is not a literal",
                                "pass a literal, e.g. device=True.")
                elif kw.arg == "device":
                    device = bool(kw.value.value)
            for arg in dec.args:
                if not self.signature_expr(arg):
                    self.report(arg, "decorator", f"@cuda.jit signature `{self.src_name(arg)}` on `{fn.name}` is not a type signature",
                                "pass a signature string such as 'void(float32[:], float32[:])' or nothing.")
        (self.device_fns if device else self.kernels).add(fn.name)
        return "device" if device else "kernel"

    def signature_expr(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return True
        if isinstance(node, (ast.Tuple, ast.List)):
            return all(self.signature_expr(e) for e in node.elts)
        if isinstance(node, ast.Name) and node.id in self.constants:
            return True
        return self.type_expr(node)

    def type_expr(self, node: ast.AST) -> bool:
        """numba type objects: float32, float32[:], void(float32[:], int32)."""
        if self.is_dtype(node):
            return True
        if isinstance(node, ast.Subscript):
            return self.type_expr(node.value) and all(
                isinstance(s, ast.Slice) or (isinstance(s, ast.Constant) and isinstance(s.value, int))
                for s in (node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]))
        if isinstance(node, ast.Call):
            return self.type_expr(node.func) and not node.keywords and all(self.type_expr(a) for a in node.args)
        return False

    def module_assign(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        fix = ("module-level names may only hold literal constants or dtypes (TPB = 256, EPS = 1e-5, F32 = numpy.float32); "
               "allocate arrays inside launch() and keep no state between calls.")
        if isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Attribute):
                self.report(stmt, "module-state", f"module-level `{self.src_name(stmt.target)} {self.src_name(stmt.op)}= ...` mutates module state", fix)
            else:
                self.attr_assign_report(stmt.target, "at module level")
            return
        names: list[str] = []
        ok_targets = True
        for t in targets:
            for sub in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                if isinstance(sub, ast.Name):
                    names.append(sub.id)
                elif isinstance(sub, ast.Attribute):
                    self.attr_assign_report(sub, "at module level")
                    ok_targets = False
                else:
                    self.report(sub, "module-state", f"module-level assignment to `{self.src_name(sub)}` mutates module state", fix)
                    ok_targets = False
        if stmt.value is None:
            return
        if not self.const_expr(stmt.value):
            what = self.src_name(stmt.value)
            if len(what) > 60:
                what = what[:57] + "..."
            kind = "a mutable container" if isinstance(stmt.value, (ast.List, ast.Dict, ast.Set, ast.ListComp,
                                                                    ast.DictComp, ast.SetComp)) else "not a literal constant"
            if not isinstance(stmt.value, ast.Lambda):
                self.report(stmt, "module-state", f"module-level `{', '.join(names) or '...'} = {what}` is {kind}", fix)
            else:
                self.report(stmt, "module-state", f"module-level `{', '.join(names) or '...'}` is bound to a lambda", fix)
        elif ok_targets:
            self.constants.update(names)

    def const_expr(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float, bool, str, type(None)))
        if isinstance(node, ast.Name):
            return node.id in self.constants
        if isinstance(node, ast.UnaryOp):
            return self.const_expr(node.operand)
        if isinstance(node, ast.BinOp):
            return isinstance(node.op, ARITH_OPS) and self.const_expr(node.left) and self.const_expr(node.right)
        if isinstance(node, ast.Tuple):
            return all(self.const_expr(e) for e in node.elts)
        if isinstance(node, ast.Attribute):
            return self.is_dtype(node) or self.qualname(node) in MATH_CONSTANTS or (
                (self.qualname(node) or "").startswith("numpy.") and node.attr in NUMPY_CONSTANTS)
        if isinstance(node, ast.Call):
            # scalar casts (np.float32(1.0)) and numba signatures (void(float32[:]))
            return (self.is_dtype(node.func) and not node.keywords
                    and all(self.const_expr(a) or self.type_expr(a) for a in node.args))
        if isinstance(node, ast.Subscript):
            return self.type_expr(node)
        return False

    def attr_assign_report(self, target: ast.Attribute, where: str) -> None:
        self.report(target, "attr-assign", f"assignment to attribute `{self.src_name(target)}` {where} patches an object the harness may use",
                    "never patch modules or shared objects (np.allclose, numba.cuda.event, time.perf_counter, ...); compute the result in kernels.")

    # -- kernels -----------------------------------------------------------------
    def check_kernel(self, fn: ast.FunctionDef) -> None:
        local_names = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
        body = [n for st in fn.body for n in ast.walk(st)]  # not the decorator
        for node in body:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local_names.add(node.id)
        local_names -= set(self.aliases)
        for node in body:
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = (node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target])
                for t in targets:
                    for sub in ast.walk(t):
                        if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                            root = sub
                            while isinstance(root, (ast.Attribute, ast.Subscript)):
                                root = root.value
                            if not (isinstance(root, ast.Name) and root.id in local_names):
                                self.attr_assign_report(sub, f"in `{fn.name}`")
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            q = self.qualname(func)
            name = self.src_name(func)
            if isinstance(func, ast.Name) and func.id == "print":
                self.report(node, "print", f"`print` in kernel `{fn.name}`",
                            "remove the print; kernels must only compute.")
            elif q and q in KERNEL_HOST_APIS:
                self.report(node, "kernel-host-api", f"kernel `{fn.name}` calls host API `{name}`",
                            "allocate and copy in launch() only; inside kernels use cuda.shared.array/cuda.local.array.")
            elif isinstance(func, ast.Attribute) and func.attr in HOST_COPY_METHODS:
                self.report(node, "kernel-host-api", f"kernel `{fn.name}` calls host method `.{func.attr}()`",
                            "kernels read and write device arrays by index only.")
            elif q and q.startswith("numpy.") and not self.is_dtype(func):
                self.report(node, "kernel-numpy", f"kernel `{fn.name}` calls numpy function `{name}`",
                            "use the math module (math.exp, math.sqrt, ...) or explicit loops; numpy is allowed only for dtype casts like numpy.float32(x).")


class _LaunchChecker:
    """Checks the body of launch(): size arithmetic, scratch, kernel launches."""

    def __init__(self, scr: _Screen, fn: ast.FunctionDef):
        self.s = scr
        self.fn = fn
        a = fn.args
        self.arrays = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
        self.tuples = {a.vararg.arg} if a.vararg else set()  # *inputs
        self.sizes: set[str] = set()

    def report(self, node, rule, what, fix):
        self.s.report(node, rule, what, fix)

    def run(self) -> None:
        body = self.fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        self.block(body)

    # -- statements --------------------------------------------------------------
    def block(self, stmts: list[ast.stmt]) -> None:
        for st in stmts:
            self.stmt(st)

    def stmt(self, st: ast.stmt) -> None:
        generic = (ast.Try, ast.With, ast.AsyncWith, ast.Global, ast.Nonlocal, ast.ClassDef,
                   ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(st, generic) or (getattr(ast, "TryStar", None) and isinstance(st, ast.TryStar)):
            return  # reported by the generic walk
        if isinstance(st, ast.Expr):
            v = st.value
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Subscript):
                self.kernel_launch(v)
            elif isinstance(v, ast.Call):
                self.call(v, statement=True)
            elif isinstance(v, ast.Constant) and isinstance(v.value, str):
                pass
            else:
                self.report(st, "launch-stmt", f"expression statement `{self.s.src_name(st)}` in launch does nothing useful",
                            "launch() should only size, allocate scratch and launch kernels.")
        elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            value = st.value
            if value is None:
                return
            kind = self.value_kind(value)
            for t in targets:
                self.assign_target(t, kind)
        elif isinstance(st, ast.For):
            it = st.iter
            if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                    and not it.keywords and 1 <= len(it.args) <= 3):
                self.report(st, "launch-loop", f"launch loops over `{self.s.src_name(it)}`",
                            "loop only over range(...) of sizes, e.g. `for step in range(n_passes):`.")
            else:
                for a in it.args:
                    self.expr(a)
            self.assign_target(st.target, "size")
            if st.orelse:
                self.report(st.orelse[0], "launch-stmt", "for/else in launch", "drop the else branch.")
            self.block(st.body)
        elif isinstance(st, ast.While):
            self.expr(st.test)
            if st.orelse:
                self.report(st.orelse[0], "launch-stmt", "while/else in launch", "drop the else branch.")
            self.block(st.body)
        elif isinstance(st, ast.If):
            self.expr(st.test)
            self.block(st.body)
            self.block(st.orelse)
        elif isinstance(st, ast.Return):
            if st.value is not None and not (isinstance(st.value, ast.Constant) and st.value.value is None):
                self.report(st, "launch-return", f"launch returns `{self.s.src_name(st.value)}`",
                            "write the result into `out` from a kernel and return nothing.")
        elif isinstance(st, (ast.Pass, ast.Break, ast.Continue)):
            pass
        else:
            self.report(st, "launch-stmt", f"`{type(st).__name__.lower()}` statement is not allowed in launch",
                        "launch() may only assign sizes, allocate scratch with cuda.device_array, launch kernels, loop over range and branch on sizes.")

    def assign_target(self, t: ast.AST, kind: str) -> None:
        if isinstance(t, ast.Name):
            {"array": self.arrays, "tuple": self.tuples}.get(kind, self.sizes).add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self.assign_target(e, "array" if kind in ("tuple", "array") else "size")
        elif isinstance(t, ast.Starred):
            self.assign_target(t.value, "tuple")
        elif isinstance(t, ast.Attribute):
            self.s.attr_assign_report(t, "in launch")
        elif isinstance(t, ast.Subscript):
            self.report(t, "host-write", f"launch writes into `{self.s.src_name(t)}` on the host",
                        "write results only from a kernel; launch() must not touch array contents.")
        else:
            self.report(t, "launch-stmt", f"assignment target `{self.s.src_name(t)}` is not allowed in launch",
                        "assign to plain names.")

    def value_kind(self, v: ast.AST) -> str:
        if isinstance(v, ast.Call) and self.s.qualname(v.func) in SCRATCH_CALLS:
            self.call(v)
            return "array"
        if isinstance(v, ast.Name) and v.id in self.tuples:
            return "tuple"
        if isinstance(v, ast.Name) and v.id in self.arrays:
            return "array"
        if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name) and v.value.id in self.tuples:
            self.expr(v)
            return "array"
        self.expr(v)
        return "size"

    # -- kernel launches ---------------------------------------------------------
    def kernel_launch(self, call: ast.Call) -> None:
        sub = call.func
        assert isinstance(sub, ast.Subscript)
        kern = sub.value
        kname = self.s.src_name(kern)
        if isinstance(kern, ast.Name) and kern.id in self.s.device_fns:
            self.report(call, "launch-call", f"`{kname}` is a device function and cannot be launched from the host",
                        "launch a @cuda.jit kernel (without device=True) that calls the helper.")
        elif not (isinstance(kern, ast.Name) and kern.id in self.s.kernels):
            self.report(call, "launch-call", f"`{kname}[...]` is not a @cuda.jit kernel of this module",
                        "launch only kernels defined in this module: kern[grid, block](args).")
        cfg = sub.slice
        if isinstance(cfg, ast.Tuple) and len(cfg.elts) == 2:
            for e in cfg.elts:
                self.expr(e)
        elif isinstance(cfg, ast.Tuple) and len(cfg.elts) > 2:
            self.report(cfg.elts[2], "stream",
                        f"`{kname}[{self.s.src_name(cfg)}]` passes a stream / dynamic shared memory as a 3rd/4th launch-config element",
                        "launch on the default stream as kern[grid, block](args); size shared memory statically with cuda.shared.array((CONST,), dtype).")
            for e in cfg.elts[:2]:
                self.expr(e)
        else:
            self.report(cfg, "launch-config", f"launch configuration `{kname}[{self.s.src_name(cfg)}]` is not written as [grid, block]",
                        "write kern[grid, block](args) with the grid and block sizes spelled out.")
        for kw in call.keywords:
            self.report(kw.value, "launch-call", f"keyword argument `{kw.arg}` in a kernel launch",
                        "pass kernel arguments positionally.")
        for a in call.args:
            if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name) and a.value.id in self.tuples:
                continue
            self.expr(a, kernel_arg=True)

    # -- expressions ---------------------------------------------------------------
    def expr(self, node: ast.AST, kernel_arg: bool = False) -> None:
        s = self.s
        if isinstance(node, ast.Constant):
            if not isinstance(node.value, (int, float, bool, type(None), str)):
                self.report(node, "launch-expr", f"constant `{s.src_name(node)}` is not allowed in launch", "use numbers.")
        elif isinstance(node, ast.Name):
            pass
        elif isinstance(node, ast.Attribute):
            if node.attr in HOST_COPY_METHODS:
                self.report(node, "host-copy", f"`{s.src_name(node)}` copies between host and device",
                            "keep data on the device; compute the result in kernels.")
            elif node.attr in SIZE_ATTRS:
                self.expr(node.value)
            elif s.is_dtype(node) or s.qualname(node) in MATH_CONSTANTS:
                pass
            elif node.attr in ("x", "y", "z") and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
                pass
            else:
                self.report(node, "launch-expr", f"attribute `{s.src_name(node)}` is not allowed in launch",
                            "use only .shape/.size/.ndim/.dtype of arrays, module constants and numbers.")
        elif isinstance(node, ast.Subscript):
            base = node.value
            idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if isinstance(base, ast.Attribute) and base.attr == "shape":
                self.expr(base)
                self.index(node.slice)
            elif isinstance(base, ast.Name) and (base.id in self.tuples or base.id in self.sizes):
                self.index(node.slice)
            elif all(isinstance(i, ast.Slice) for i in idx):
                self.expr(base)
                self.index(node.slice)  # a view of a device array: no copy
            else:
                self.report(node, "host-read", f"`{s.src_name(node)}` reads device array elements on the host (a device-to-host copy)",
                            "read array contents only inside kernels; on the host use .shape/.size.")
        elif isinstance(node, ast.BinOp):
            if not isinstance(node.op, ARITH_OPS):
                self.report(node, "launch-expr", f"operator in `{s.src_name(node)}` is not size arithmetic",
                            "use + - * / // % on sizes.")
            self.expr(node.left)
            self.expr(node.right)
        elif isinstance(node, ast.UnaryOp):
            self.expr(node.operand)
        elif isinstance(node, ast.BoolOp):
            for v in node.values:
                self.expr(v)
        elif isinstance(node, ast.Compare):
            self.expr(node.left)
            for c in node.comparators:
                self.expr(c)
        elif isinstance(node, ast.IfExp):
            self.expr(node.test)
            self.expr(node.body)
            self.expr(node.orelse)
        elif isinstance(node, ast.Tuple):
            for e in node.elts:
                self.expr(e)
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Subscript):
                self.report(node, "launch-call", "a kernel launch is used as a value",
                            "launch kernels as statements: kern[grid, block](args).")
                self.kernel_launch(node)
            else:
                self.call(node)
        else:
            self.report(node, "launch-expr", f"`{s.src_name(node)}` ({type(node).__name__}) is not allowed in launch",
                        "launch() expressions are limited to size arithmetic on .shape, constants and numbers.")

    def index(self, sl: ast.AST) -> None:
        for i in (sl.elts if isinstance(sl, ast.Tuple) else [sl]):
            if isinstance(i, ast.Slice):
                for part in (i.lower, i.upper, i.step):
                    if part is not None:
                        self.expr(part)
            else:
                self.expr(i)

    def call(self, call: ast.Call, statement: bool = False) -> None:
        s = self.s
        func = call.func
        q = s.qualname(func)
        name = s.src_name(func)
        bare = func.id if isinstance(func, ast.Name) and func.id not in s.aliases else None
        if q in SCRATCH_CALLS:
            if statement:
                self.report(call, "launch-stmt", f"`{name}(...)` result is discarded", "assign scratch arrays to a name.")
            for a in call.args:
                self.expr(a)
            for kw in call.keywords:
                if kw.arg == "stream":
                    self.report(kw.value, "stream", f"`{name}(..., stream=...)` uses a stream",
                                "allocate on the default stream: cuda.device_array(shape, dtype).")
                elif kw.arg in ("shape", "dtype", "order", "ary", "strides"):
                    self.expr(kw.value)
                else:
                    self.report(kw.value, "launch-call", f"option `{kw.arg}` of `{name}` is not allowed",
                                "call cuda.device_array(shape, dtype) or cuda.device_array_like(x).")
            return
        if bare in LAUNCH_SIZE_CALLS or q in LAUNCH_SIZE_CALLS:
            if (bare in ("min", "max")) and len(call.args) < 2:
                self.report(call, "host-read", f"`{name}` of a single argument iterates an array on the host",
                            "use min/max of two or more sizes; reduce array contents in a kernel.")
            if call.keywords:
                self.report(call, "launch-call", f"keyword arguments to `{name}`", "pass sizes positionally.")
            for a in call.args:
                self.expr(a)
            return
        if q and s.is_dtype(func):
            for a in call.args:
                self.expr(a)
            return
        if bare == "print":
            self.report(call, "print", "`print` in launch", "remove the print; launch() must only launch kernels.")
        elif q in HOST_COPY_CALLS or (isinstance(func, ast.Attribute) and func.attr in HOST_COPY_METHODS):
            self.report(call, "host-copy", f"launch calls `{name}`, a host<->device copy",
                        "keep all data on the device; launch kernels that write `out` directly.")
        elif q in STREAM_CALLS:
            self.report(call, "stream", f"launch creates a stream with `{name}`",
                        "launch every kernel on the default stream: kern[grid, block](args).")
        elif q in SYNC_CALLS:
            self.report(call, "sync", f"launch calls `{name}`",
                        "remove it; the harness synchronizes and times the launch itself.")
        elif q in EVENT_CALLS:
            self.report(call, "event", f"launch uses CUDA events via `{name}`",
                        "remove it; the harness does the timing.")
        elif q and (q == "numpy" or q.startswith("numpy.")):
            self.report(call, "host-numpy", f"launch calls numpy function `{name}` on the host",
                        "compute in kernels; numpy may only be used for dtype objects such as np.float32.")
        elif isinstance(func, ast.Name) and func.id in s.kernels | s.device_fns:
            self.report(call, "launch-call", f"`{name}(...)` calls a kernel without a launch configuration",
                        f"launch it as {name}[grid, block](args).")
        else:
            self.report(call, "launch-call", f"launch calls `{name}`, which is not an allowed call",
                        "launch() may only call len, min, max, int, abs, math.ceil/floor, cuda.device_array(_like) and kern[grid, block](args).")
        for a in call.args:
            if isinstance(a, ast.Call):
                self.expr(a)
