"""Static rules that screen model-written code (AST only; the source is never run).

Two shapes of module are screened:

* a coaching-task candidate (``check_task_module``): ``@cuda.jit`` kernels, optional
  ``@cuda.jit(device=True)`` helpers, module-level constants, and exactly one host
  function ``launch(out, *inputs)`` that sizes the grid with integer arithmetic,
  may allocate device scratch arrays, and launches kernels;
* a puzzle module (``check_puzzle_module``): the same, but no ``launch`` (the
  puzzle harness launches it) and a ``@cuda.jit`` function named ``kernel``.
  The optimiser's puzzle candidates and the code in AI hints are screened so.

The module level is an allow-list, because whatever is there runs at import:
docstrings, imports of numba/math/numpy, literal constants (and arithmetic of
them), dtype names, type expressions with literal slices only (``float32[:, ::1]``,
``void(float32[:], int32)``), and the functions above with literal decorator
options. Inside kernels, calls and module references are an allow-list too (the
cuda kernel API, math, dtype casts, a few builtins, the module's device
functions), no attribute is ever stored, and locals expose only array facts
(``.shape``, ``.size``, ...). ``launch`` keeps its own allow-list.

``check_task_module(source)`` returns one :class:`RuleFinding` per problem; an empty list
means the candidate passed the static screen (it still has to pass the runtime
checks). No input makes the screen raise: oversized or too deeply nested sources,
and anything the screen itself trips over, come back as findings.

Rule ids
--------
syntax, too-large, too-deep, unreadable, import, builtin, dunder, private, try,
with, global, class, lambda, nested-def, async, yield, attr-assign,
module-state, module-code, annotation, decorator, host-function, default-arg,
kernel-missing, launch-forbidden, launch-missing, launch-duplicate,
launch-signature, launch-decorated, launch-stmt, launch-expr, launch-call,
launch-config, launch-loop, launch-return, host-copy, host-numpy, host-read,
host-write, stream, sync, event, print, kernel-host-api, kernel-numpy,
kernel-call, kernel-attr, kernel-name, module-ref, float16, internals.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["RuleFinding", "check_task_module", "check_puzzle_module", "RULES",
           "MAX_SOURCE_CHARS", "MAX_DEPTH", "MAX_NODES"]


@dataclass(frozen=True)
class RuleFinding:
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
    "too-large": "the candidate is larger than the screen reads",
    "too-deep": "the candidate nests deeper than the screen reads",
    "unreadable": "the screen could not read the candidate",
    "import": "only numba, math and numpy may be imported, at the top of the module",
    "builtin": "exec/eval/compile/__import__/open/globals/locals/vars/getattr/setattr/delattr are forbidden",
    "dunder": "dunder names and attributes (__dict__, __globals__, __build_class__, ...) are forbidden",
    "private": "no _private attributes",
    "try": "no try/except/finally",
    "with": "no with statements",
    "global": "no global/nonlocal",
    "class": "no classes",
    "lambda": "no lambdas",
    "nested-def": "no functions defined inside functions",
    "async": "no async code",
    "yield": "no generators",
    "attr-assign": "no assignment to attributes",
    "module-state": "module-level assignments must be literal constants or dtype names",
    "module-code": "no module-level code besides docstrings, imports, constants and the allowed defs",
    "annotation": "annotations are type expressions only",
    "decorator": "kernels use exactly one @cuda.jit decorator with literal options",
    "host-function": "launch is the only host function (none in a puzzle module)",
    "default-arg": "parameter defaults must be literal constants",
    "kernel-missing": "a puzzle module defines `kernel` with @cuda.jit",
    "launch-forbidden": "a puzzle module has no launch (the puzzle launches `kernel`)",
    "launch-missing": "the module must define launch(out, *inputs)",
    "launch-duplicate": "exactly one launch function",
    "launch-signature": "launch takes at least one parameter",
    "launch-decorated": "launch must not be decorated",
    "launch-stmt": "launch may only assign sizes, allocate scratch, launch kernels, loop over range, branch on sizes, return",
    "launch-expr": "launch expressions are limited to size arithmetic",
    "launch-call": "launch may only call len/min/max/int/abs/math.ceil/floor, cuda.device_array(_like) and kernels",
    "launch-config": "kernel launches are written kern[grid, block](args) or kern[grid, block, 0, shared_bytes](args)",
    "launch-loop": "launch loops are for-loops over range(...)",
    "launch-return": "launch returns nothing",
    "host-copy": "no host<->device copies",
    "host-numpy": "no numpy computation on the host",
    "host-read": "no reading device array elements on the host",
    "host-write": "no writing into arrays on the host",
    "stream": ("no streams but the default one (a launch's 3rd element is the literal 0): the harness's "
               "timing and synchronization see the default stream, and work on another could escape them"),
    "sync": "no cuda.synchronize",
    "event": "no cuda events",
    "print": "no print",
    "kernel-host-api": "kernels may not call host APIs",
    "kernel-numpy": "kernels may not call numpy functions (only dtype casts)",
    "kernel-call": "kernels call only the cuda kernel API, math, dtype casts, a few builtins and device functions",
    "kernel-attr": "kernels read only array facts (.shape, .size, ...) from their values",
    "kernel-name": "kernels use only their locals, module constants, device functions, imports and a few builtins",
    "module-ref": "kernels may not hold or pass modules or functions outside the cuda kernel API",
    "float16": "no half precision (float16/fp16/bf16)",
    "internals": "no numba/CUDA driver internals",
}

# Beyond these the screen does not read a module at all: no honest kernel comes near them, and
# they keep every walk below (and Python's own parser) far from its limits.
MAX_SOURCE_CHARS = 200_000
MAX_DEPTH = 100       # nesting levels; an operator inside an operator (a long sum) adds none
MAX_NODES = 50_000

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
DTYPE_PREFIXES = {"numpy", "numba", "numba.types", "numba.core.types", "numba.cuda", "numba.cuda.types"}
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
# `2 ** 10` and `1 << 5` are constants; `10 ** 10 ** 10` is an import that never ends.
GROWTH_OPS = (ast.Pow, ast.LShift)
MAX_LITERAL_EXPONENT = 64

# What kernel code may reach (after `numba.cuda.`): the device-side API, nothing of the host's.
CUDA_KERNEL_CALLS = {
    "grid", "gridsize", "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or",
    "syncwarp", "threadfence", "threadfence_block", "threadfence_system", "activemask",
    "lanemask_lt", "popc", "brev", "clz", "ffs", "fma", "cbrt", "selp", "nanosleep",
    "all_sync", "any_sync", "eq_sync", "ballot_sync", "match_any_sync", "match_all_sync",
    "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync",
    "shared.array", "local.array", "const.array_like", "cg.this_grid",
}
CUDA_KERNEL_CALL_MODULES = {"atomic", "libdevice", "random"}  # numba.cuda.atomic.add, ...
CUDA_KERNEL_VALUES = {f"{d}.{a}" for d in ("threadIdx", "blockIdx", "blockDim", "gridDim")
                      for a in "xyz"} | {"laneid", "warpsize"}
KERNEL_BUILTINS = {"range", "min", "max", "abs", "len", "int", "float", "bool", "complex",
                   "round", "divmod", "pow", "enumerate", "zip"}
LOCAL_ATTRS = {"shape", "size", "ndim", "dtype", "real", "imag", "itemsize", "strides"}
LOCAL_METHODS = {"conjugate", "sync"}
ANNOTATION_NAMES = {"int", "float", "bool", "complex"}

MODULE_FIX = ("a module may hold only a docstring, imports of numba/math/numpy, literal constants "
              "(TPB = 256, EPS = 1e-5, F32 = numpy.float32) and @cuda.jit functions{launch}; "
              "put all work inside kernels.")
KERNEL_REF_FIX = ("inside kernels use cuda.threadIdx/blockIdx/blockDim/gridDim, cuda.laneid/warpsize, "
                  "calls of the cuda kernel API and math, dtypes and module constants; never bind or pass a module.")
_NOISE = (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)


# ---------------------------------------------------------------------------
# Entry points: every failure of the screen itself becomes a finding.


def check_task_module(source: str, filename: str = "candidate.py") -> list[RuleFinding]:
    """Screen a coaching-task candidate's source; return the findings (empty: it passed)."""
    return _check_safely(source, filename, puzzle=False)


def check_puzzle_module(source: str, filename: str = "kernel.py") -> list[RuleFinding]:
    """Screen a puzzle module (an optimiser candidate for a puzzle, or code from an AI hint): the
    task grammar without launch, and `kernel` must be a @cuda.jit kernel."""
    return _check_safely(source, filename, puzzle=True)


def _check_safely(source, filename: str, puzzle: bool) -> list[RuleFinding]:
    """The verifier and the optimiser act on findings; a traceback here would stop them, so anything
    the screen trips over rejects the candidate with the reason instead."""
    try:
        tree, findings = _parse_bounded(source, filename)
        if tree is None:
            return findings
        return _Screen(tree, filename, puzzle).run()
    except Exception as exc:  # noqa: BLE001 - the screen itself must never raise
        return [_whole_file_finding(
            filename, "unreadable", f"the screen could not read this candidate: {type(exc).__name__}: {exc}"[:300],
            "send a plain module written in the allowed grammar.")]


def _whole_file_finding(filename: str, rule: str, what: str, fix: str, line: int = 1) -> RuleFinding:
    return RuleFinding(rule, line, 0, f"line {line}: {what}.", fix, filename)


def _parse_bounded(source, filename: str) -> tuple[ast.Module | None, list[RuleFinding]]:
    """Parse only what is small enough to walk; (None, [finding]) when the source is refused."""
    if not isinstance(source, str):
        return None, [_whole_file_finding(filename, "unreadable", f"the candidate is a {type(source).__name__}, not text",
                                          "send the module's source text.")]
    if len(source) > MAX_SOURCE_CHARS:
        return None, [_whole_file_finding(
            filename, "too-large", f"the candidate is {len(source):,} characters long; the screen reads at most "
            f"{MAX_SOURCE_CHARS:,}", "send a shorter module: a kernel, its helpers and constants.")]
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:  # the screen itself may use try; candidates may not
        line = exc.lineno or 1
        return None, [RuleFinding(
            "syntax", line, max((exc.offset or 1) - 1, 0),
            f"line {line}: the candidate does not parse ({exc.msg}).",
            "return a complete, valid Python module.", filename)]
    except (RecursionError, MemoryError) as exc:
        return None, [_whole_file_finding(
            filename, "too-deep", f"the candidate nests too deeply for Python's parser to read it ({type(exc).__name__})",
            f"keep expressions and blocks under {MAX_DEPTH} levels deep.")]
    except (ValueError, OverflowError) as exc:  # e.g. a NUL byte in the source
        return None, [_whole_file_finding(filename, "unreadable", f"the candidate cannot be parsed ({exc})",
                                          "send plain Python source text.")]
    nodes, depth, line = _measure(tree)
    if nodes > MAX_NODES:
        return None, [_whole_file_finding(
            filename, "too-large", f"the candidate has more than {MAX_NODES:,} syntax nodes",
            "send a shorter module: a kernel, its helpers and constants.")]
    if depth > MAX_DEPTH:
        return None, [_whole_file_finding(
            filename, "too-deep", f"the code here nests more than {MAX_DEPTH} levels deep",
            "flatten it: fewer nested blocks, calls and brackets (a long sum is fine).", line)]
    return tree, []


def _measure(tree: ast.AST) -> tuple[int, int, int]:
    """(node count, nesting depth, line of the deepest node), walked with an explicit stack and
    stopping at the limits, so that no input can exhaust Python's stack here or later.

    An operator directly inside another (the left-leaning tree of `a + a + ... + a`) adds no depth:
    a long sum is legitimate kernel code, and the screen walks such chains without recursion."""
    nodes, deepest, line = 0, 0, 1
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if depth > deepest:
            deepest, line = depth, getattr(node, "lineno", line) or line
        if nodes > MAX_NODES or deepest > MAX_DEPTH:
            break
        chain = isinstance(node, ast.BinOp)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _NOISE):
                stack.append((child, depth if chain and isinstance(child, ast.BinOp) else depth + 1))
    return nodes, deepest, line


def _binop_parts(node: ast.BinOp) -> tuple[list[ast.BinOp], list[ast.AST]]:
    """The operator nodes and the non-operator operands of an operator tree, without recursion."""
    ops: list[ast.BinOp] = []
    leaves: list[ast.AST] = []
    stack: list[ast.AST] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.BinOp):
            ops.append(n)
            stack.append(n.right)
            stack.append(n.left)
        else:
            leaves.append(n)
    return ops, leaves


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _literal_slice(s: ast.AST) -> bool:
    """`:` or `::1`: the only slices a numba array type is written with."""
    if not isinstance(s, ast.Slice) or s.lower is not None or s.upper is not None:
        return False
    step = s.step
    return step is None or (isinstance(step, ast.Constant) and type(step.value) is int)


def _signature_string(text: str) -> bool:
    """'void(float32[:], int32)' or 'float32[:, ::1], int32'. Numba evaluates a signature string as
    Python, so it may hold only bare type names, literal slices, one call of a type and a tuple."""
    if len(text) > 1000:
        return False
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return False

    def type_ok(n: ast.AST) -> bool:
        if isinstance(n, ast.Subscript):
            dims = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            return type_ok(n.value) and all(_literal_slice(d) for d in dims)
        return isinstance(n, ast.Name) and n.id in DTYPE_NAMES

    if isinstance(tree, ast.Call):
        return (isinstance(tree.func, ast.Name) and type_ok(tree.func) and not tree.keywords
                and all(map(type_ok, tree.args)))
    return all(map(type_ok, tree.elts)) if isinstance(tree, ast.Tuple) else False


def _small_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return (isinstance(node, ast.Constant) and type(node.value) in (int, float)
            and abs(node.value) <= MAX_LITERAL_EXPONENT)


def _is_dtype_q(q: str | None) -> bool:
    if not q or "." not in q:
        return False
    prefix, _, last = q.rpartition(".")
    return prefix in DTYPE_PREFIXES and last in DTYPE_NAMES


# ---------------------------------------------------------------------------


class _Screen:
    def __init__(self, tree: ast.Module, filename: str, puzzle: bool = False):
        self.tree = tree
        self.filename = filename
        self.puzzle = puzzle
        self.findings: list[RuleFinding] = []
        self._seen: set[tuple[str, int, int]] = set()
        self.aliases: dict[str, str] = {}      # local name -> dotted import path
        self.kernels: set[str] = set()          # launchable @cuda.jit kernels
        self.device_fns: set[str] = set()       # @cuda.jit(device=True) helpers
        self.constants: set[str] = set()        # module-level constant names
        self.numeric: set[str] = set()          # ... of them, the numeric ones
        self.dtype_names: set[str] = set()      # ... of them, the ones bound to a dtype
        self.module_names: set[str] = set()     # every name the module level binds

    # -- reporting ---------------------------------------------------------
    def report(self, node: ast.AST, rule: str, what: str, fix: str) -> None:
        line = getattr(node, "lineno", 1) or 1
        col = getattr(node, "col_offset", 0) or 0
        key = (rule, line, col)
        if key in self._seen:
            return
        self._seen.add(key)
        self.findings.append(RuleFinding(rule, line, col, f"line {line}: {what}.", fix, self.filename))

    # -- names -------------------------------------------------------------
    def qualname(self, node: ast.AST) -> str | None:
        """Dotted import path an expression names (``np.float32`` -> ``numpy.float32``)."""
        attrs = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id], *reversed(attrs)])

    def is_dtype(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name) and node.id in self.dtype_names:
            return True
        return _is_dtype_q(self.qualname(node))

    @staticmethod
    def src_name(node: ast.AST, limit: int = 80) -> str:
        """Source text for a message, short; huge or deep expressions are named, not printed."""
        size = 0
        for _ in ast.walk(node):
            size += 1
            if size > 120:
                return f"a long {type(node).__name__.lower()} expression"
        try:
            text = ast.unparse(node)
        except Exception:  # noqa: BLE001 - a message must not fail the screen
            return type(node).__name__
        return text if len(text) <= limit else text[: limit - 3] + "..."

    # -- driver --------------------------------------------------------------
    def run(self) -> list[RuleFinding]:
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
        if module == "numba.core" and all(a.name == "types" for a in stmt.names):
            return  # `from numba.core import types`: numba.types by its longer name
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
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
                self.attr_assign_report(node)
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
            elif isinstance(node, ast.Name):
                self.check_name(node)
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

    def check_name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_BUILTINS:
            self.report(node, "builtin", f"`{node.id}` is forbidden",
                        "call kernels and cuda APIs by name; no dynamic code, reflection or file access.")
        elif node.id.startswith("__") and node.id.endswith("__"):
            self.report(node, "dunder", f"dunder name `{node.id}` is forbidden",
                        "use ordinary names; interpreter internals are not part of a kernel.")

    def check_attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__") and node.attr.endswith("__"):
            self.report(node, "dunder", f"dunder attribute `{self.src_name(node)}` is forbidden",
                        "use only ordinary attributes such as .shape, .size, cuda.threadIdx.x.")
            return
        if node.attr.startswith("_"):
            self.report(node, "private", f"private attribute `{self.src_name(node)}` is forbidden",
                        "use only public attributes such as .shape, .size, cuda.threadIdx.x.")
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
                        self.report(sub, "float16", f"string {s[:40]!r} names a half-precision type",
                                    "compute in float32 (numba.float32) like the reference.")

    def check_defaults(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for d in [*fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)]:
            if not (isinstance(d, ast.Constant) and isinstance(d.value, (int, float, bool, type(None)))):
                self.report(d, "default-arg", f"parameter default `{self.src_name(d)}` of `{fn.name}` is not a literal number (a mutable default keeps state between calls)",
                            "drop the default or use a literal number.")

    # -- module level: an allow-list, since all of it runs at import -----------
    def module_level(self) -> None:
        functions: list[tuple[ast.FunctionDef, str]] = []
        for stmt in self.tree.body:
            if isinstance(stmt, ast.FunctionDef):
                if stmt.name in self.aliases:
                    self.report(stmt, "module-state", f"`def {stmt.name}` rebinds an imported name",
                                "give the function a name of its own.")
                functions.append((stmt, self.classify_function(stmt)))
                self.module_names.add(stmt.name)
                self.check_annotations(stmt)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                self.module_assign(stmt)
            elif not (_is_docstring(stmt) or self._reported_elsewhere(stmt)):
                self.module_code(stmt)
        for fn, role in functions:
            if role in ("kernel", "device"):
                _KernelChecker(self, fn).run()
        if self.puzzle:
            self.puzzle_functions(functions)
        else:
            self.task_functions(functions)

    @staticmethod
    def _reported_elsewhere(stmt: ast.stmt) -> bool:
        """Statements the generic walk already rejects (or checks, for imports)."""
        kinds = (ast.Import, ast.ImportFrom, ast.Try, ast.With, ast.AsyncWith, ast.Global, ast.Nonlocal,
                 ast.ClassDef, ast.AsyncFunctionDef)
        return isinstance(stmt, kinds) or bool(getattr(ast, "TryStar", None) and isinstance(stmt, ast.TryStar))

    def module_fix(self) -> str:
        return MODULE_FIX.format(launch="" if self.puzzle else " and one launch()")

    def module_code(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Expr):
            what = f"module-level expression `{self.src_name(stmt.value)}` would run at import"
        else:
            what = f"module-level `{type(stmt).__name__.lower()}` statement is not allowed"
        self.report(stmt, "module-code", what, self.module_fix())

    def task_functions(self, functions: list[tuple[ast.FunctionDef, str]]) -> None:
        launches = [fn for fn, _ in functions if fn.name == "launch"]
        for fn, role in functions:
            if role == "host" and fn.name != "launch":
                self.report(fn, "host-function", f"host function `{fn.name}` is not allowed",
                            "make it a @cuda.jit(device=True) helper, or inline it into launch().")
        if not launches:
            self.report(self.tree.body[0] if self.tree.body else self.tree, "launch-missing",
                        "the module defines no `launch` function",
                        "define exactly one undecorated `def launch(out, *inputs):` that launches the kernels.")
            return
        for extra in launches[1:]:
            self.report(extra, "launch-duplicate", "a second `launch` function is defined (only the last one would run)",
                        "keep exactly one launch function.")
        for fn in launches:
            self.check_launch(fn)

    def check_launch(self, fn: ast.FunctionDef) -> None:
        if fn.decorator_list:
            self.report(fn, "launch-decorated", "`launch` is decorated",
                        "remove the decorator; launch is a plain host function.")
            return
        a = fn.args
        if not (a.posonlyargs or a.args or a.vararg):
            self.report(fn, "launch-signature", "`launch` takes no parameters",
                        "write `def launch(out, *inputs):` (device arrays in, output first).")
        if a.kwarg or a.kwonlyargs:
            self.report(fn, "launch-signature", "`launch` takes keyword-only or **kwargs parameters",
                        "write `def launch(out, *inputs):` with positional parameters only.")
        _LaunchChecker(self, fn).run()

    def puzzle_functions(self, functions: list[tuple[ast.FunctionDef, str]]) -> None:
        for fn, role in functions:
            if fn.name == "launch":
                self.report(fn, "launch-forbidden", "a puzzle module defines `launch`; the puzzle launches `kernel` itself",
                            "remove launch(); keep the starter's @cuda.jit `kernel` and its device functions.")
            elif role == "host":
                self.report(fn, "host-function", f"host function `{fn.name}` is not allowed in a puzzle module",
                            "make it a @cuda.jit(device=True) helper, or inline it into the kernel.")
        kernels = [(fn, role) for fn, role in functions if fn.name == "kernel"]
        if kernels and kernels[-1][1] == "device":  # the last definition is the one that counts
            self.report(kernels[-1][0], "kernel-missing", "`kernel` is a device function; the puzzle launches it",
                        "decorate it with plain @cuda.jit.")
        elif not kernels:
            self.report(self.tree.body[0] if self.tree.body else self.tree, "kernel-missing",
                        "the module defines no `kernel`",
                        "define the puzzle's kernel as `@cuda.jit` `def kernel(...)`, with the starter's parameters.")

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
        device = self.jit_options(fn, dec) if isinstance(dec, ast.Call) else False
        (self.device_fns if device else self.kernels).add(fn.name)
        return "device" if device else "kernel"

    def jit_options(self, fn: ast.FunctionDef, dec: ast.Call) -> bool:
        """Check @cuda.jit(...)'s arguments (they run at import); return whether device=True."""
        device = False
        for kw in dec.keywords:
            if kw.arg not in JIT_OPTIONS:
                self.report(kw.value if kw.arg else dec, "decorator", f"option `{kw.arg or '**'}` of @cuda.jit on `{fn.name}` is not allowed",
                            f"use only these options: {', '.join(sorted(JIT_OPTIONS))}.")
            elif not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, (bool, int, float, str, type(None)))):
                self.report(kw.value, "decorator", f"option `{kw.arg}` of @cuda.jit on `{fn.name}` is not a literal",
                            "pass a literal, e.g. device=True.")
            elif kw.arg == "device":
                device = bool(kw.value.value)
        if len(dec.args) > 1:
            self.report(dec.args[1], "decorator", f"@cuda.jit on `{fn.name}` takes one signature, not {len(dec.args)} arguments",
                        "pass one signature string such as 'void(float32[:], float32[:])', or nothing.")
        for arg in dec.args:
            if not self.signature_expr(arg):
                self.report(arg, "decorator", f"@cuda.jit signature `{self.src_name(arg)}` on `{fn.name}` is not a type signature",
                            "pass a signature string such as 'void(float32[:], float32[:])', a type expression "
                            "such as void(float32[:], int32) (slices written `:` or `::1` only), or nothing.")
        return device

    def check_annotations(self, fn: ast.FunctionDef) -> None:
        """Parameter and return annotations are evaluated when the def runs, at import."""
        a = fn.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p)]
        for node in [p.annotation for p in params] + [fn.returns]:
            if node is not None and not self.annotation_ok(node):
                self.report(node, "annotation", f"annotation `{self.src_name(node)}` on `{fn.name}` is not a type",
                            "annotate with a dtype or array type (float32, float32[:]) or not at all.")

    def annotation_ok(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return True
        if isinstance(node, ast.Name) and node.id in ANNOTATION_NAMES and node.id not in self.module_names:
            return True
        return self.type_expr(node)

    def signature_expr(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return _signature_string(node.value)
        if isinstance(node, (ast.Tuple, ast.List)):
            return all(self.signature_expr(e) for e in node.elts)
        if isinstance(node, ast.Name) and node.id in self.constants:
            return True
        return self.type_expr(node)

    def type_expr(self, node: ast.AST) -> bool:
        """numba type objects: float32, float32[:], float32[:, ::1], void(float32[:], int32).

        Only literal slices: `float32[<expression>:]` would run the expression at import."""
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self.is_dtype(node)
        if isinstance(node, ast.Subscript):
            dims = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return self.is_dtype(node.value) and all(_literal_slice(s) for s in dims)
        if isinstance(node, ast.Call):
            return self.is_dtype(node.func) and not node.keywords and all(self.type_expr(a) for a in node.args)
        return False

    def module_assign(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign) -> None:
        fix = ("module-level names may only hold literal constants or dtypes (TPB = 256, EPS = 1e-5, F32 = numpy.float32); "
               "allocate arrays inside launch() and keep no state between calls.")
        if isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Attribute):
                self.report(stmt, "module-state", f"module-level `{self.src_name(stmt.target)} {self.src_name(stmt.op)}= ...` mutates module state", fix)
            return
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names, ok_targets = self.module_targets(targets, fix)
        if isinstance(stmt, ast.AnnAssign) and not self.annotation_ok(stmt.annotation):
            self.report(stmt.annotation, "annotation", f"annotation `{self.src_name(stmt.annotation)}` is not a type",
                        "annotate constants with int/float/bool, or not at all.")
        if stmt.value is None:
            return
        if not self.const_expr(stmt.value):
            self.report(stmt, "module-state", self.not_constant(names, stmt.value), fix)
        elif ok_targets:
            self.constants.update(names)
            self.classify_constants(targets, stmt.value)

    def classify_constants(self, targets: list[ast.AST], value: ast.AST) -> None:
        """Remember which constants are numbers (arithmetic may use them) and which are dtypes."""
        pairs = [(t, value) for t in targets if isinstance(t, ast.Name)]
        for t in targets:
            if isinstance(t, (ast.Tuple, ast.List)) and isinstance(value, ast.Tuple) and len(t.elts) == len(value.elts):
                pairs += [(n, v) for n, v in zip(t.elts, value.elts) if isinstance(n, ast.Name)]
        for name, v in pairs:
            if self.numeric_expr(v):
                self.numeric.add(name.id)
            if self.is_dtype(v):
                self.dtype_names.add(name.id)

    def module_targets(self, targets: list[ast.AST], fix: str) -> tuple[list[str], bool]:
        """The plain names assigned; False when any target is something else (reported)."""
        names: list[str] = []
        ok = True
        for t in targets:
            for sub in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                if isinstance(sub, ast.Name) and sub.id in self.aliases:
                    self.report(sub, "module-state", f"module-level assignment rebinds the imported name `{sub.id}`", fix)
                    ok = False
                elif isinstance(sub, ast.Name):
                    names.append(sub.id)
                    self.module_names.add(sub.id)
                elif not isinstance(sub, ast.Attribute):  # attribute stores: reported by the generic walk
                    self.report(sub, "module-state", f"module-level assignment to `{self.src_name(sub)}` mutates module state", fix)
                    ok = False
                else:
                    ok = False
        return names, ok

    def not_constant(self, names: list[str], value: ast.AST) -> str:
        what = self.src_name(value, 60)
        shown = ", ".join(names) or "..."
        if isinstance(value, ast.Lambda):
            return f"module-level `{shown}` is bound to a lambda"
        mutable = isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp))
        kind = "a mutable container" if mutable else "not a literal constant (it would run at import)"
        return f"module-level `{shown} = {what}` is {kind}"

    def const_expr(self, node: ast.AST) -> bool:
        """A value that can be computed at import without running anything of consequence."""
        if isinstance(node, ast.Constant):
            return type(node.value) in (int, float, bool, str, type(None))
        if self.is_dtype(node):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.constants
        if isinstance(node, ast.Tuple):
            return all(self.const_expr(e) for e in node.elts)
        if isinstance(node, ast.Subscript):
            return self.type_expr(node)
        if isinstance(node, ast.Call) and any(self.type_expr(a) for a in node.args):
            return self.type_expr(node)  # a numba signature: void(float32[:])
        return self.numeric_expr(node)

    def numeric_expr(self, node: ast.AST) -> bool:
        """Numbers, numeric constants, math constants, scalar casts and their arithmetic."""
        if isinstance(node, ast.BinOp):
            return self.const_arith(node)
        if isinstance(node, ast.Constant):
            return type(node.value) in (int, float, bool)
        if isinstance(node, ast.Name):
            return node.id in self.numeric
        if isinstance(node, ast.UnaryOp):
            return self.numeric_expr(node.operand)
        if isinstance(node, ast.Attribute):
            q = self.qualname(node) or ""
            return q in MATH_CONSTANTS or (q.count(".") == 1 and q.startswith("numpy.") and node.attr in NUMPY_CONSTANTS)
        if isinstance(node, ast.Call):  # np.float32(1.0)
            return (self.is_dtype(node.func) and not node.keywords and len(node.args) <= 1
                    and all(self.numeric_expr(a) for a in node.args))
        return False

    def const_arith(self, node: ast.BinOp) -> bool:
        """Arithmetic of numeric constants, walked flat (a long sum must not exhaust the stack), with
        growth operators (** and <<) limited to small literal right operands."""
        ops, leaves = _binop_parts(node)
        for op in ops:
            if not isinstance(op.op, ARITH_OPS):
                return False
            if isinstance(op.op, GROWTH_OPS) and not _small_literal(op.right):
                return False
        return all(self.numeric_expr(leaf) for leaf in leaves)

    def attr_assign_report(self, target: ast.Attribute) -> None:
        self.report(target, "attr-assign", f"assignment to attribute `{self.src_name(target)}` patches an object the harness may use",
                    "never store into attributes (np.allclose, numba.cuda.event, arrays, ...); compute the result in kernels.")


class _KernelChecker:
    """Checks a @cuda.jit body: what it calls, which module things it touches, which attributes of
    its values it reads. An allow-list, so an alias (`c = np.ctypeslib`) or a trip through an
    array's attributes cannot reach Python's host side on the simulator, where kernels run as
    Python. (On a GPU, Numba's compiler rejects such code anyway.)"""

    def __init__(self, scr: _Screen, fn: ast.FunctionDef):
        self.s = scr
        self.fn = fn
        a = fn.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p)]
        self.nodes = [n for st in fn.body for n in ast.walk(st)]  # not the decorator
        self.locals = {p.arg for p in params} | {
            n.id for n in self.nodes if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
        self.parents = {id(child): node for node in self.nodes for child in ast.iter_child_nodes(node)}
        self.params = params

    def report(self, node, rule, what, fix):
        self.s.report(node, rule, what, fix)

    def run(self) -> None:
        self.shadowing()
        for node in self.nodes:
            if isinstance(node, ast.Call):
                self.call(node)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                self.attribute(node)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.name(node)

    def shadowing(self) -> None:
        """A local called `math` or `cuda` would make the screen misread what the kernel calls."""
        for p in self.params:
            if p.arg in self.s.aliases:
                self.report(p, "module-ref", f"parameter `{p.arg}` of `{self.fn.name}` shadows an imported name", KERNEL_REF_FIX)
        for n in self.nodes:
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in self.s.aliases:
                self.report(n, "module-ref", f"`{self.fn.name}` rebinds the imported name `{n.id}`", KERNEL_REF_FIX)

    def _is_callee(self, node: ast.AST) -> bool:
        parent = self.parents.get(id(node))
        return isinstance(parent, ast.Call) and parent.func is node

    def _in_chain(self, node: ast.AST) -> bool:
        parent = self.parents.get(id(node))
        return isinstance(parent, ast.Attribute) and parent.value is node

    # -- references --------------------------------------------------------------
    def value_ref_ok(self, q: str) -> bool:
        """Module things a kernel may hold as values: dtypes, constants, the thread's coordinates."""
        if _is_dtype_q(q) or q in MATH_CONSTANTS:
            return True
        if q.startswith("numpy.") and q.count(".") == 1 and q.split(".")[1] in NUMPY_CONSTANTS:
            return True
        return q.startswith("numba.cuda.") and q[len("numba.cuda."):] in CUDA_KERNEL_VALUES

    def module_ref(self, node: ast.AST) -> None:
        q = self.s.qualname(node)
        if self._in_chain(node) or self._is_callee(node) or q is None or self.value_ref_ok(q):
            return
        self.report(node, "module-ref",
                    f"`{self.s.src_name(node)}` in `{self.fn.name}` holds or passes `{q}`, which is not a value of the cuda kernel API",
                    KERNEL_REF_FIX)

    def attribute(self, node: ast.Attribute) -> None:
        if self.s.qualname(node) is not None:
            self.module_ref(node)
        elif not self._is_callee(node) and node.attr not in LOCAL_ATTRS and not node.attr.startswith("_"):
            self.report(node, "kernel-attr", f"`{self.fn.name}` reads `.{node.attr}` of `{self.s.src_name(node.value)}`",
                        f"read only {', '.join(sorted(LOCAL_ATTRS))} from arrays and numbers.")

    def name(self, node: ast.Name) -> None:
        s = self.s
        ident = node.id
        if ident in s.aliases:
            self.module_ref(node)
        elif (ident in self.locals or ident in s.module_names or ident in KERNEL_BUILTINS
              or ident in FORBIDDEN_BUILTINS or ident == "print" or ident.startswith("__")):
            return  # forbidden names and print have rules of their own
        else:
            self.report(node, "kernel-name", f"`{self.fn.name}` uses `{ident}`, which it neither defines nor imports",
                        f"use locals, parameters, module constants, device functions and {', '.join(sorted(KERNEL_BUILTINS))}.")

    # -- calls -------------------------------------------------------------------
    def call(self, node: ast.Call) -> None:
        func = node.func
        name = self.s.src_name(func)
        q = self.s.qualname(func)
        if isinstance(func, ast.Name) and func.id == "print" and func.id not in self.locals:
            self.report(node, "print", f"`print` in kernel `{self.fn.name}`", "remove the print; kernels must only compute.")
        elif q is not None:
            self.api_call(node, q, name)
        elif isinstance(func, ast.Name):
            self.named_call(node, func.id)
        elif isinstance(func, ast.Attribute) and func.attr in HOST_COPY_METHODS:
            self.report(node, "kernel-host-api", f"kernel `{self.fn.name}` calls host method `.{func.attr}()`",
                        "kernels read and write device arrays by index only.")
        elif not (isinstance(func, ast.Attribute) and func.attr in LOCAL_METHODS):
            self.report(node, "kernel-call", f"kernel `{self.fn.name}` calls `{name}`, which is not an allowed call",
                        "call the cuda kernel API, math functions, dtype casts, device functions and "
                        f"{', '.join(sorted(KERNEL_BUILTINS))}.")

    def named_call(self, node: ast.Call, ident: str) -> None:
        s = self.s
        if (ident in s.device_fns or ident in s.dtype_names) and ident not in self.locals:
            return  # a helper, or a cast through a dtype constant (F32 = numpy.float32)
        if ident in KERNEL_BUILTINS and ident not in self.locals and ident not in s.module_names:
            return
        if ident in FORBIDDEN_BUILTINS or ident.startswith("__"):
            return  # reported by the generic walk
        what = ("a kernel, which is launched, not called" if ident in s.kernels else
                "a value, not a device function" if ident in self.locals or ident in s.module_names else
                "not defined in this module")
        self.report(node, "kernel-call", f"kernel `{self.fn.name}` calls `{ident}`, {what}",
                    "call @cuda.jit(device=True) helpers of this module, the cuda kernel API, math and dtype casts.")

    def api_call(self, node: ast.Call, q: str, name: str) -> None:
        if q in KERNEL_HOST_APIS:
            self.report(node, "kernel-host-api", f"kernel `{self.fn.name}` calls host API `{name}`",
                        "allocate and copy in launch() only; inside kernels use cuda.shared.array/cuda.local.array.")
        elif _is_dtype_q(q):
            return
        elif q.startswith("numpy."):
            self.report(node, "kernel-numpy", f"kernel `{self.fn.name}` calls numpy function `{name}`",
                        "use the math module (math.exp, math.sqrt, ...) or explicit loops; numpy is allowed only for dtype casts like numpy.float32(x).")
        elif not self.kernel_api(q):
            self.report(node, "kernel-call", f"kernel `{self.fn.name}` calls `{name}` (`{q}`), which is not part of the cuda kernel API",
                        "call cuda.grid/syncthreads/shared.array/local.array/atomic.*/shfl_*_sync and friends, "
                        "math functions and dtype casts.")

    @staticmethod
    def kernel_api(q: str) -> bool:
        parts = q.split(".")
        if parts[0] == "math":
            return len(parts) == 2
        if q.startswith("numba.cuda."):
            rest = q[len("numba.cuda."):]
            head, _, tail = rest.partition(".")
            return rest in CUDA_KERNEL_CALLS or (head in CUDA_KERNEL_CALL_MODULES and tail != "" and "." not in tail)
        return False


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
            self.s.attr_assign_report(t)
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
        if isinstance(cfg, ast.Tuple) and 2 <= len(cfg.elts) <= 4:
            # kern[grid, block], kern[grid, block, 0] or kern[grid, block, 0, shared_bytes]: the
            # stream must be the literal 0 (the default stream, which the harness times and
            # synchronizes); the dynamic shared memory size is size arithmetic like the others.
            if len(cfg.elts) > 2:
                stream = cfg.elts[2]
                if not (isinstance(stream, ast.Constant) and type(stream.value) is int and stream.value == 0):
                    self.report(stream, "stream",
                                f"`{kname}[{self.s.src_name(cfg)}]` launches on the stream `{self.s.src_name(stream)}`",
                                "launch on the default stream: write 0 as the 3rd element, as in "
                                "kern[grid, block, 0, shared_bytes](args), or leave it out.")
            for i, e in enumerate(cfg.elts):
                if i != 2:
                    self.expr(e)
        else:
            self.report(cfg, "launch-config", f"launch configuration `{kname}[{self.s.src_name(cfg)}]` is not written as [grid, block]",
                        "write kern[grid, block](args) with the grid and block sizes spelled out "
                        "(or kern[grid, block, 0, shared_bytes](args) for dynamic shared memory).")
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
            if node.id in s.aliases and not (s.is_dtype(node) or s.qualname(node) in MATH_CONSTANTS):
                self.report(node, "launch-expr", f"`{node.id}` names the module `{s.qualname(node)}`; launch may not hold or pass modules",
                            "pass kernels device arrays and sizes only.")
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
            ops, leaves = _binop_parts(node)  # flat: a long sum must not exhaust the stack
            for op in ops:
                if not isinstance(op.op, ARITH_OPS):
                    self.report(op, "launch-expr", f"operator in `{s.src_name(op)}` is not size arithmetic",
                                "use + - * / // % on sizes.")
            for leaf in leaves:
                self.expr(leaf)
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
