"""Untrusted kernel files are built from their syntax tree, never executed.

Loading a Python file runs its top level: imports, assignments, and in every `def` its decorators,
default values and annotations, all before Numba's compiler has seen a line. For a learner on
their own machine that is their own Python; for a served room's learner or a model it is the door
to the machine (a one-line `def z(x=exec(...)): pass` read the puzzle's reference, patched the
checker and passed an empty kernel). So for untrusted code the loader does not run the module: it
walks the top level and makes the namespace itself, and only these can be in it:

- imports of numba (and its types), math and numpy, resolved here against the modules the caller
  hands in (the simulator's stand-in numba or the real one);
- constants computed by a small evaluator: numbers, strings, tuples, arithmetic with bounded
  growth, dtype and signature expressions (`float32[:, ::1]`, `void(float32[:], int32)`), and calls
  of a few pure functions (dtype casts, int/float/min/max/abs/round, math's cheap functions);
- functions made from their definitions with the decorators, defaults and annotations taken off,
  so that making one runs nothing; a decorator may only be `cuda.jit` (with literal options or a
  signature, checked before Numba evaluates it) and a default only a constant. Annotations are
  never evaluated. A function's body runs only once Numba's compiler has accepted it (the caller's
  rule) or, for a coaching task's `launch`, after the static screen has passed it.

Every node is judged by its place in the tree, never by line numbers, and whatever falls outside
the grammar is a finding written for the learner: the line, what is not allowed, what to write.
An `if __name__ == "__main__":` block is left out, as Python itself would leave it out.
"""

from __future__ import annotations

import ast
import types as pytypes
from dataclasses import dataclass

import numpy

from .load_error import LoadError
from .static_rules import (DTYPE_NAMES, FORBIDDEN_BUILTINS, INTERNAL_NAMES, INTERNAL_PREFIXES, JIT_OPTIONS, MAX_DEPTH,
                           MAX_LITERAL_EXPONENT, MAX_SOURCE_CHARS, NUMPY_CONSTANTS, _parse_bounded, _signature_string)

# What a built module may import, by the name the file imports it by.
IMPORTABLE = ("numba", "numba.cuda", "numba.types", "numba.core", "numba.core.types", "numba.cuda.types",
              "numba.cuda.libdevice", "numba.cuda.random", "math", "numpy", "typing")  # typing: for annotations
MAX_INT_BITS = 256          # a constant larger than this is a mistake or an attack on the loader
MAX_TEXT = 10_000           # characters of a string constant
MAX_ITEMS = 4096            # elements of a tuple or list constant
MATH_CALLS = {"sqrt", "ceil", "floor", "trunc", "log", "log2", "log10", "exp", "exp2", "fabs", "isqrt",
              "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "hypot",
              "copysign", "fmod", "isfinite", "isinf", "isnan", "radians", "degrees", "gcd", "ldexp"}
PLAIN_CALLS = {"int": int, "float": float, "bool": bool, "abs": abs, "min": min, "max": max, "round": round}
NUMBER = (int, float, bool, complex, numpy.number, numpy.bool_)
MAX_CALL_INT = 1 << 64      # an integer given to a pure call (round(1, -10**8) would run for hours)
# What numpy calls the dtype of a scalar type name a kernel file may cast with (the others it knows).
NUMPY_NAMES = {"boolean": "bool", "b1": "bool", "bool_": "bool", "long": "int64", "ulong": "uint64", "uint": "uint64"}
SHAPE = ("A kernel file's top level may hold only imports of numba, math and numpy, constants "
         "(e.g. `TPB = 8`, `EPS = 1e-5`, `F32 = numba.float32`) and functions decorated with `@cuda.jit`; "
         "everything else belongs inside a kernel.")


@dataclass(frozen=True)
class Finding:
    """One thing the builder would not run: its line, its rule and the learner's message."""

    line: int
    rule: str
    message: str


class ModuleRefused(LoadError):
    """The file's top level holds something that would run as plain Python: every such place."""

    def __init__(self, findings: list[Finding]):
        first = findings[0]
        super().__init__("static", first.message, first.line)
        self.rule = first.rule
        self.findings = findings


class _Refuse(Exception):
    def __init__(self, node: ast.AST | None, rule: str, message: str):
        super().__init__(message)
        self.node, self.rule, self.message = node, rule, message


class _Poisoned(Exception):
    """A name whose own statement was refused: said once there, not again at every use."""


def build_module(source: str, filename: str, namespace: dict, import_module) -> None:
    """Fill `namespace` with what the file's top level defines, running none of the file.
    `import_module(name)` gives the module for an importable name (KeyError or ImportError when
    this loader has none). Raises ModuleRefused (every finding) or LoadError (what numba said)."""
    tree, findings = _parse_bounded(source, filename)
    if tree is None:
        f = findings[0]
        if f.rule == "syntax":  # the screen's words are a model's: parse again for Python's own error
            raise LoadError.syntax(_syntax_error(source, filename, f.line))
        raise LoadError("static", {
            "too-large": f"The file is longer than a kernel file can be ({MAX_SOURCE_CHARS:,} characters at most); "
                         "keep the kernel, its helpers and its constants.",
            "too-deep": f"line {f.line}: the code nests too deeply to be read ({MAX_DEPTH} levels at most); use fewer "
                        "nested blocks, calls and brackets.",
        }.get(f.rule, "The file cannot be read as Python text; paste it again as plain text."), f.line)
    try:  # compiling runs nothing; it finds what the parser lets through (`break` outside a loop, ...)
        compile(tree, filename, "exec", dont_inherit=True)
    except SyntaxError as e:
        raise LoadError.syntax(e) from None
    try:
        _Builder(source, filename, namespace, import_module).run(tree)
    except ModuleRefused as refused:
        raise _outdented(refused, source) from None


def _syntax_error(source: str, filename: str, line: int) -> SyntaxError:
    try:
        ast.parse(source, filename=filename)
    except SyntaxError as e:
        return e
    return SyntaxError("invalid syntax", (filename, line, None, None))


def _outdented(refused: ModuleRefused, source: str) -> LoadError:
    """Kernel code pushed to column 0 is refused as module code; the indentation is what to fix,
    said as the loader of a learner's own file says it (python_words.py)."""
    findings, said = [], set()
    for f in refused.findings:
        moved = LoadError.outdented(source, f.line)
        if moved is None:
            findings.append(f)
        elif moved.message not in said:
            said.add(moved.message)
            findings.append(Finding(f.line, "outdented", moved.message))
    if all(f.rule == "outdented" for f in findings):
        return LoadError.outdented(source, findings[0].line)
    return ModuleRefused(findings)


class _Builder:
    def __init__(self, source: str, filename: str, namespace: dict, import_module):
        self.source, self.filename = source, filename
        self.ns = namespace
        self.import_module = import_module
        self.findings: list[Finding] = []
        self.poisoned: set[str] = set()
        self.qualnames: dict[int, str] = {}   # id of a module-derived value -> its dotted name
        self.keep: list = []                  # the values qualnames names (ids stay theirs)
        self.types: set[int] = set()          # numba types made here: float32[:], void(float32[:])
        self.decorators: set[int] = set()     # what cuda.jit(...) returned, waiting for a function
        self.functions: set[int] = set()      # functions defined by this file

    # -- the top level ---------------------------------------------------------------------------
    def run(self, tree: ast.Module) -> None:
        pending = list(tree.body)
        while pending:
            stmt = pending.pop(0)
            try:
                chosen = self.branch(stmt)
                if chosen is not None:  # the statements of the branch Python would take, in its place
                    pending[0:0] = chosen
                    continue
                self.statement(stmt)
            except _Refuse as r:
                self.refuse(stmt, r)
            except _Poisoned:
                self.poison(stmt)
            except (RecursionError, MemoryError):  # a constant nested past what the evaluator walks
                self.refuse(stmt, _Refuse(stmt, "too-deep", f"`{self.text(stmt)}` nests too deeply to be read as a "
                                                            "constant; write the value out."))
        if self.findings:
            raise ModuleRefused(self.findings)

    def branch(self, stmt: ast.stmt) -> list | None:
        """An `if` at the top level on constants (`if TPB > 4:`), or a main guard: the branch Python
        takes when it loads the file as a kernel file. None for any other statement."""
        if _is_main_guard(stmt):
            return stmt.orelse  # `__name__` is never "__main__" for a kernel file
        if not isinstance(stmt, ast.If):
            return None
        return stmt.body if _plain_value(stmt.test, self.evaluate(stmt.test)) else stmt.orelse

    def refuse(self, stmt: ast.stmt, r: _Refuse) -> None:
        line = getattr(r.node, "lineno", None) or stmt.lineno
        self.findings.append(Finding(line, r.rule, f"line {line}: {r.message}"))
        self.poison(stmt)

    def poison(self, stmt: ast.stmt) -> None:
        for name in _bound_names(stmt):
            self.poisoned.add(name)
            self.ns.pop(name, None)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            return  # a docstring, or a string standing alone: nothing runs
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self.bind(alias.asname, self.module(stmt, alias.name))
                else:
                    self.module(stmt, alias.name)
                    top = alias.name.split(".")[0]
                    self.bind(top, self.module(stmt, top))
        elif isinstance(stmt, ast.ImportFrom):
            self.import_from(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            self.assign(stmt)
        elif isinstance(stmt, ast.FunctionDef):
            self.bind(stmt.name, self.function(stmt))
        elif isinstance(stmt, ast.Assert):
            if not _plain_value(stmt.test, self.evaluate(stmt.test)):
                said = _plain_value(stmt.msg, self.evaluate(stmt.msg)) if stmt.msg is not None else ""
                raise LoadError.raised(AssertionError(said), stmt.lineno)
        elif isinstance(stmt, ast.ClassDef):
            raise _Refuse(stmt, "class", f"`class {stmt.name}` would run its body when the file loads. " + SHAPE)
        elif isinstance(stmt, ast.AsyncFunctionDef):
            raise _Refuse(stmt, "async", f"`async def {stmt.name}` cannot be a kernel. Write `@cuda.jit` and a "
                                         "plain `def`.")
        else:
            raise _Refuse(stmt, "module-code", f"`{self.text(stmt)}` at the top of the file would run as plain Python "
                                               "when the file loads. " + SHAPE)

    def bind(self, name: str, value) -> None:
        self.poisoned.discard(name)
        self.ns[name] = value

    # -- imports -----------------------------------------------------------------------------------
    def module(self, node: ast.AST, name: str):
        if name not in IMPORTABLE:
            raise _Refuse(node, "import", f"`import {name}`: a kernel file may import only numba (e.g. `from numba "
                                          "import cuda, float32`), math and numpy.")
        try:
            module = self.import_module(name)
        except (KeyError, ImportError):
            raise LoadError.unavailable(f"import {name}", node.lineno) from None
        return self.named(module, name)

    def import_from(self, stmt: ast.ImportFrom) -> None:
        if stmt.module == "__future__":  # a compiler flag (annotations are never evaluated here anyway)
            import __future__

            for alias in stmt.names:
                if alias.name not in __future__.all_feature_names:
                    raise LoadError("compile_error", f"SyntaxError: future feature {alias.name} is not defined "
                                    f"(line {stmt.lineno}). Fix the Python syntax on that line.", stmt.lineno)
                self.bind(alias.asname or alias.name, getattr(__future__, alias.name))
            return
        if stmt.level or not stmt.module:
            raise _Refuse(stmt, "import", "a relative import: a kernel file may import only numba, math and numpy.")
        base = self.module(stmt, stmt.module)
        for alias in stmt.names:
            if alias.name == "*":
                raise _Refuse(stmt, "import", f"`from {stmt.module} import *`: import the names you use, e.g. "
                                              "`from numba import cuda, float32`.")
            dotted = f"{stmt.module}.{alias.name}"
            value = self.module(stmt, dotted) if dotted in IMPORTABLE else self.attribute(stmt, base, alias.name)
            self.bind(alias.asname or alias.name, value)

    # -- assignments -------------------------------------------------------------------------------
    def assign(self, stmt) -> None:
        if stmt.value is None:  # `TPB: int`, an annotation alone
            raise _Refuse(stmt, "module-state", f"`{self.text(stmt)}` declares a name without a value. Give it one: "
                                                "`TPB = 8`.")
        if isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name):
                raise self.bad_target(stmt.target)
            value = self.evaluate(ast.BinOp(left=ast.Name(stmt.target.id, ast.Load(), lineno=stmt.lineno,
                                                           col_offset=stmt.col_offset),
                                            op=stmt.op, right=stmt.value, lineno=stmt.lineno,
                                            col_offset=stmt.col_offset))
            self.bind(stmt.target.id, value)
            return
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = self.evaluate(stmt.value)
        for target in targets:
            self.assign_to(target, value)

    def assign_to(self, target: ast.AST, value) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (tuple, list)) \
                and len(target.elts) == len(value):
            for t, v in zip(target.elts, value):
                self.assign_to(t, v)
        else:
            raise self.bad_target(target)

    def bad_target(self, target: ast.AST) -> _Refuse:
        rule = "attr-assign" if isinstance(target, (ast.Attribute, ast.Subscript)) else "module-state"
        return _Refuse(target, rule, f"`{self.text(target)} = ...` at the top of the file would change a value "
                                     "when the file loads. Assign plain names only: `TPB = 8`.")

    # -- functions ---------------------------------------------------------------------------------
    def function(self, node: ast.FunctionDef):
        if getattr(node, "type_params", None):
            raise _Refuse(node, "module-code", f"`def {node.name}[...]`: type parameters are not part of a "
                                               "kernel. Write a plain `def`.")
        self.body_names(node)
        node.body = self.fold(node.body, _own_names(node), node)
        args = node.args
        defaults = [self.default(node, d) for d in args.defaults]
        kw_defaults = {a.arg: self.default(node, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)
                       if d is not None}
        decorators = [self.decorator(node, d) for d in node.decorator_list]
        # What is left runs nothing when it is executed: a `def` without decorators, defaults or
        # annotations only makes a function object of its code.
        bare = ast.FunctionDef(name=node.name, args=ast.arguments(
            posonlyargs=[_plain(a) for a in args.posonlyargs], args=[_plain(a) for a in args.args],
            vararg=args.vararg and _plain(args.vararg), kwonlyargs=[_plain(a) for a in args.kwonlyargs],
            kw_defaults=[None] * len(args.kwonlyargs), kwarg=args.kwarg and _plain(args.kwarg), defaults=[]),
            body=node.body, decorator_list=[], returns=None, type_comment=None)
        if "type_params" in ast.FunctionDef._fields:
            bare.type_params = []
        ast.copy_location(bare, node)
        bare.end_lineno, bare.end_col_offset = node.end_lineno, node.end_col_offset
        code = compile(ast.fix_missing_locations(ast.Module(body=[bare], type_ignores=[])), self.filename, "exec")
        exec(code, self.ns)  # noqa: S102 - makes the function object, nothing else (see above)
        fn = self.ns.pop(node.name)
        fn.__defaults__ = tuple(defaults) or None
        fn.__kwdefaults__ = kw_defaults or None
        self.functions.add(id(fn))
        self.keep.append(fn)
        for decorator, line in reversed(decorators):
            fn = self.call_numba(line, decorator, fn)
        return fn

    def fold(self, body: list, own: set[str], where: ast.AST) -> list:
        """A function's statements with every `if` that module constants alone decide replaced by the
        branch Python takes (`if DEBUG:` with DEBUG = False): the module's constants never change, so
        this is the branch every run takes, and neither Numba's compiler (which types every line of
        untrusted code) nor the simulator sees the other."""
        out = []
        for st in body:
            if isinstance(st, ast.If) and (taken := self.decided(st.test, own)) is not None:
                out += self.fold(st.body if taken else st.orelse, own, st)
                continue
            for field in ("body", "orelse", "finalbody"):  # blocks inside blocks (and nested functions)
                inner = getattr(st, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    setattr(st, field, self.fold(inner, own, st))
            for handler in getattr(st, "handlers", []):
                handler.body = self.fold(handler.body, own, handler)
            out.append(st)
        return out or [ast.copy_location(ast.Pass(), where)]

    def decided(self, test: ast.AST, own: set[str]) -> bool | None:
        """The value of a test made of module constants only (numbers, strings, None), or None."""
        for node in ast.walk(test):
            if isinstance(node, ast.Name):
                if node.id in own or node.id not in self.ns or not isinstance(self.ns[node.id], (*NUMBER, str,
                                                                                                 type(None))):
                    return None
            elif not isinstance(node, (ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.Load,
                                       ast.cmpop, ast.boolop, ast.unaryop, ast.operator)):
                return None
        try:
            return bool(_plain_value(test, self.evaluate(test)))
        except (_Refuse, _Poisoned, LoadError, RecursionError):
            return None

    def body_names(self, fn: ast.FunctionDef) -> None:
        """What no kernel needs and plain Python would use to leave it (exec, open, getattr, a dunder
        such as `max.__self__`): refused in function bodies too, though Numba's compiler must accept a
        kernel before any of it runs. The compiler is the body's judge; this is a second fence."""
        nodes = [inner for statement in fn.body for inner in ast.walk(statement)]
        own = _own_names(fn)
        for node in nodes:
            if isinstance(node, ast.Name) and (node.id in FORBIDDEN_BUILTINS - own or _dunder(node.id)):
                raise _Refuse(node, "builtin" if node.id in FORBIDDEN_BUILTINS else "dunder",
                              f"`{node.id}` (in `def {fn.name}`) is not part of a kernel; a kernel computes with "
                              "its arrays, numbers, `cuda` and `math`.")
            if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
                raise _Refuse(node, "private", f"`{self.text(node)}` (in `def {fn.name}`) reaches into Python's or a "
                                               "library's insides; use public attributes such as `.shape`.")

    def default(self, fn: ast.FunctionDef, node: ast.AST):
        try:
            value = self.evaluate(node)
        except _Refuse:
            value = None
            ok = False
        else:
            ok = isinstance(value, (*NUMBER, type(None)))
        if not ok:
            raise _Refuse(node, "default-arg", f"`{self.text(node)}`, a default value in `def {fn.name}`, would be "
                                               "computed when the file loads; a default may only be a number or a "
                                               "number constant defined above, e.g. `x=0`.")
        return value

    def decorator(self, fn: ast.FunctionDef, node: ast.AST):
        refusal = _Refuse(node, "decorator", f"`@{self.text(node)}` on `def {fn.name}` would run when the file loads; "
                                             "the only decorator here is `@cuda.jit`, with literal options "
                                             "(`@cuda.jit(device=True)`) or a signature.")
        try:
            value = self.evaluate(node)
        except _Refuse as r:
            raise refusal if r.rule not in ("signature",) else r from None
        if self.qualnames.get(id(value)) != "numba.cuda.jit" and id(value) not in self.decorators:
            raise refusal
        return value, node.lineno

    def call_numba(self, line: int, fn, *args, **kwargs):
        """Numba's own code (cuda.jit, a type's call): what it raises is the learner's load error."""
        from ..sim.fakecuda import BadSignature, Unsupported

        try:
            return fn(*args, **kwargs)
        except Unsupported as e:
            raise LoadError.unavailable(e.what, line) from None
        except BadSignature as e:
            raise LoadError("compile_error", f"@cuda.jit signature (line {line}): {e}.", line) from None
        except LoadError:
            raise
        except Exception as e:  # noqa: BLE001 - numba's word on the learner's decorator
            raise LoadError.raised(e, line) from None

    # -- the evaluator of constants ----------------------------------------------------------------
    def evaluate(self, node: ast.AST):
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            raise _Refuse(node, "module-state", f"`{self.text(node)}` would run as Python when the file loads; a "
                                                "constant may only be a number, a string, a tuple, arithmetic of "
                                                "them, or a numba type such as `numba.float32`.")
        return method(node)

    def eval_Constant(self, node: ast.Constant):
        value = node.value
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise _Refuse(node, "module-state", f"a string of {len(value):,} characters; keep constants short.")
        if not isinstance(value, (*NUMBER, str, type(None))):
            raise _Refuse(node, "module-state", f"`{self.text(node)}` is not a number or a string.")
        return value

    def eval_Name(self, node: ast.Name):
        if node.id in self.poisoned:
            raise _Poisoned()
        if node.id in self.ns and not node.id.startswith("__"):
            return self.ns[node.id]
        if node.id in PLAIN_CALLS:
            return PLAIN_CALLS[node.id]
        raise _Refuse(node, "module-state", f"`{node.id}` is not defined above this line (at the top of a kernel "
                                            "file a constant can use only imports and constants defined before it).")

    def eval_Attribute(self, node: ast.Attribute):
        return self.attribute(node, self.evaluate(node.value), node.attr)

    def attribute(self, node: ast.AST, base, attr: str):
        where = self.qualnames.get(id(base))
        if where is None or not _is_namespace(base):
            raise _Refuse(node, "module-state", f"`.{attr}` of a value: at the top of a kernel file only a module's "
                                                "names may be read (`numba.float32`, `math.pi`).")
        dotted = f"{where}.{attr}"
        if attr.startswith("_"):
            raise _Refuse(node, "private", f"`{dotted}` is private to the module; use its public names.")
        if where.startswith("numba") and (attr in INTERNAL_NAMES and dotted != "numba.core"
                                          or any(dotted.startswith(p) for p in INTERNAL_PREFIXES)):
            raise _Refuse(node, "internals", f"`{dotted}` reaches into Numba's internals; a kernel file uses "
                                             "`numba.cuda`, the scalar types and `numba.types`.")
        if where == "numpy" and attr not in (DTYPE_NAMES - {"void", "none"}) | NUMPY_CONSTANTS:
            raise _Refuse(node, "import", f"`numpy.{attr}`: a kernel file uses numpy only for dtypes (`np.float32`) "
                                          "and constants (`np.pi`).")
        try:
            value = getattr(base, attr)
            if isinstance(value, pytypes.ModuleType) and value.__name__.split(".")[0] not in ("numba", "math", "numpy"):
                raise _Refuse(node, "import", f"`{dotted}` is the module `{value.__name__}`: a kernel file may use only "
                                              "numba, math and numpy.")
            if where.startswith("numba") and isinstance(value, (*NUMBER, str, tuple, type(None))):
                # the simulator's numba gives numbers where the real one has placeholders (cuda.warpsize,
                # cuda.laneid): a constant must be the same in both, or the simulator could take a branch
                # that Numba's compiler cut as dead and never checked
                raise _Refuse(node, "module-state", f"`{dotted}` has a value only inside a kernel; use it there.")
        except AttributeError:
            raise LoadError.unavailable(dotted, node.lineno) from None
        except (LoadError, _Refuse):
            raise
        except Exception as e:  # the stand-in's Unsupported
            what = getattr(e, "what", dotted)
            raise LoadError.unavailable(what, node.lineno) from None
        return self.named(value, dotted)

    def named(self, value, dotted: str):
        """Remember where a value came from (a module, numba.cuda.jit, a dtype): what may be done
        with it is decided by that name, not by the object."""
        if not isinstance(value, NUMBER + (str, type(None))) and id(value) not in self.qualnames:
            self.qualnames[id(value)] = dotted
            self.keep.append(value)
        return value

    def eval_Subscript(self, node: ast.Subscript):
        base = self.evaluate(node.value)
        dims = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if self.is_type(base) and dims and all(_literal_slice(d) for d in dims):
            index = tuple(slice(None, None, d.step.value if d.step is not None else None) for d in dims)
            return self.made_type(self.call_numba(node.lineno, lambda: base[index if len(index) > 1 else index[0]]))
        if isinstance(base, (tuple, str)) and not isinstance(node.slice, ast.Slice):
            index = self.evaluate(node.slice)
            if type(index) is int and -len(base) <= index < len(base):
                return base[index]
        raise _Refuse(node, "module-state", f"`{self.text(node)}`: at the top of a kernel file an index may only make "
                                            "an array type (`float32[:]`, `float32[:, ::1]`) or pick from a tuple.")

    def is_type(self, value) -> bool:
        """A numba or numpy scalar type (by the name it was imported by), or a type made of one."""
        if id(value) in self.types:
            return True
        name = self.qualnames.get(id(value), "")
        return name.rpartition(".")[2] in DTYPE_NAMES and name.split(".")[0] in ("numba", "numpy")

    def made_type(self, value):
        if not isinstance(value, (*NUMBER, str, type(None), numpy.generic)):  # a cast gives a number
            self.types.add(id(value))
            self.keep.append(value)
        return value

    def eval_Tuple(self, node: ast.Tuple):
        return tuple(self.items(node))

    def eval_List(self, node: ast.List):
        return self.items(node)

    def items(self, node) -> list:
        if len(node.elts) > MAX_ITEMS:
            raise _Refuse(node, "module-state", f"a constant of {len(node.elts):,} items; keep constants short.")
        if any(isinstance(e, ast.Starred) for e in node.elts):
            raise _Refuse(node, "module-state", "`*` inside a constant; write the items out.")
        return [self.evaluate(e) for e in node.elts]

    def eval_UnaryOp(self, node: ast.UnaryOp):
        value = self.evaluate(node.operand)
        if isinstance(node.op, ast.Not):
            return not _plain_value(node, value)
        if not isinstance(value, NUMBER) or (isinstance(node.op, ast.Invert) and not isinstance(value, int)):
            raise _Refuse(node, "module-state", f"`{self.text(node)}`: arithmetic is on numbers only.")
        return {ast.USub: lambda v: -v, ast.UAdd: lambda v: +v, ast.Invert: lambda v: ~v}[type(node.op)](value)

    def eval_BinOp(self, node: ast.BinOp):
        left, right = self.evaluate(node.left), self.evaluate(node.right)
        op = type(node.op)
        if isinstance(left, NUMBER) and isinstance(right, NUMBER):
            if op in (ast.Pow, ast.LShift) and not (isinstance(right, (int, float)) and abs(right) <= MAX_LITERAL_EXPONENT):
                raise _Refuse(node, "module-state", f"`{self.text(node)}`: an exponent or shift above "
                                                    f"{MAX_LITERAL_EXPONENT}; write the number.")
            value = self.arithmetic(node, op, left, right)
            if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
                raise _Refuse(node, "module-state", f"`{self.text(node)}` is larger than {MAX_INT_BITS} bits.")
            return value
        if op is ast.Add and type(left) is type(right) and isinstance(left, (str, tuple)) \
                and len(left) + len(right) <= MAX_TEXT:
            return left + right
        raise _Refuse(node, "module-state", f"`{self.text(node)}`: arithmetic at the top of a kernel file is on "
                                            "numbers (and joining two strings or tuples).")

    def arithmetic(self, node, op, left, right):
        ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
               ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
               ast.Pow: lambda a, b: a ** b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
               ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b}
        if op not in ops:
            raise _Refuse(node, "module-state", f"`{self.text(node)}`: that operator is not constant arithmetic.")
        try:
            return ops[op](left, right)
        except (ArithmeticError, TypeError, ValueError) as e:
            raise LoadError.raised(e, node.lineno) from None

    def eval_BoolOp(self, node: ast.BoolOp):
        values = [_plain_value(node, self.evaluate(v)) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)

    def eval_Compare(self, node: ast.Compare):
        left = _plain_value(node, self.evaluate(node.left))
        ops = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
               ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}
        for op, comparator in zip(node.ops, node.comparators):
            right = _plain_value(node, self.evaluate(comparator))
            if type(op) not in ops:
                raise _Refuse(node, "module-state", f"`{self.text(node)}`: compare numbers with == != < <= > >=.")
            try:
                if not ops[type(op)](left, right):
                    return False
            except TypeError as e:
                raise LoadError.raised(e, node.lineno) from None
            left = right
        return True

    def eval_IfExp(self, node: ast.IfExp):
        return self.evaluate(node.body) if _plain_value(node, self.evaluate(node.test)) else self.evaluate(node.orelse)

    def eval_Call(self, node: ast.Call):
        func = self.evaluate(node.func)
        name = self.qualnames.get(id(func), "")
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise _Refuse(node, "module-state", f"`{self.text(node)}`: pass the arguments one by one.")
        if name == "numba.cuda.jit" or id(func) in self.decorators:
            return self.jit_call(node, func)
        if node.keywords:
            raise _Refuse(node, "module-state", f"`{self.text(node)}`: only `cuda.jit` takes options here.")
        args = [self.evaluate(a) for a in node.args]
        if self.is_type(func) and len(args) == 1 and isinstance(args[0], NUMBER):
            return self.cast(node, name, args[0])  # `float32(0.5)`, `np.int32(4)`
        if self.is_type(func) and all(self.is_type(a) for a in args):  # a signature: `void(float32[:], int32)`
            return self.made_type(self.call_numba(node.lineno, func, *args))
        pure = func in PLAIN_CALLS.values() or (name.startswith("math.") and name[5:] in MATH_CALLS)
        numbers = len(args) <= 8 and all(_small(a) for a in args)
        if func is round and len(args) == 2:  # round(1, -10**8) makes a number of 10**8 digits
            numbers = numbers and -400 <= args[1] <= 400
        if func is float and len(args) == 1 and isinstance(args[0], str):  # float("inf")
            numbers = len(args[0]) <= 64
        if pure and numbers:
            try:
                return func(*args)
            except (ArithmeticError, TypeError, ValueError) as e:
                raise LoadError.raised(e, node.lineno) from None
        raise _Refuse(node, "module-state", f"`{self.text(node)}` would run a function when the file loads; at the top "
                                            "of a kernel file only casts (`float32(0.5)`), `int`, `float`, `min`, "
                                            "`max`, `abs`, `round` and math's functions of numbers may be called.")

    def cast(self, node: ast.Call, name: str, value):
        """A number cast to a scalar type is made by numpy, whichever numba the file is built against:
        the simulator's stand-in and the real Numba then hold the same constant (Numba decides an `if`
        on a constant when it compiles, and the simulator must take the branch Numba kept)."""
        dtype_name = name.rpartition(".")[2]
        try:
            dtype = numpy.dtype(NUMPY_NAMES.get(dtype_name, dtype_name))
            if dtype.kind not in "biufc":
                raise TypeError(f"{dtype_name} is not a number type")
            return dtype.type(value)
        except (TypeError, ValueError, OverflowError) as e:
            raise LoadError.raised(e, node.lineno) from None

    def jit_call(self, node: ast.Call, jit):
        """`cuda.jit(...)`: options from JIT_OPTIONS with constant values, and at most one positional
        argument: a signature (its strings checked first, since Numba evaluates a signature string as
        Python) or a function of this file. What comes back waits for its function."""
        if len(node.args) > 1:
            raise _Refuse(node, "decorator", "`cuda.jit` takes one signature (or a list of them) and options.")
        options = {}
        for k in node.keywords:
            if k.arg not in JIT_OPTIONS:
                raise _Refuse(k.value, "decorator", f"`{k.arg}=` is not an option a kernel file may give `cuda.jit`; "
                                                    f"use {', '.join(sorted(JIT_OPTIONS))}.")
            value = self.evaluate(k.value)
            if not isinstance(value, (bool, int, str, type(None))):
                raise _Refuse(k.value, "decorator", f"`{k.arg}=` takes a literal value, e.g. `{k.arg}=True`.")
            options[k.arg] = value
        args = [self.evaluate(a) for a in node.args]
        for a in args:
            if not (id(a) in self.functions or self.signature_ok(a)):
                raise _Refuse(node.args[0], "signature",
                              f"`{self.text(node.args[0])}` is not a signature `cuda.jit` can take: write the types, "
                              "e.g. `'void(float32[:], int32)'` or `void(float32[:], int32)`.")
        made = self.call_numba(node.lineno, jit, *args, **options)
        if not (args and id(args[0]) in self.functions):  # a decorator, waiting for its function
            self.decorators.add(id(made))
            self.keep.append(made)
        return made

    def signature_ok(self, value) -> bool:
        """A signature as Numba takes it: types made here, a list or tuple of them, or a string that
        names types only (Numba evaluates a signature string as Python)."""
        if isinstance(value, str):
            return _signature_string(value)
        if isinstance(value, (list, tuple)):
            return all(self.signature_ok(v) for v in value)
        return self.is_type(value)

    def text(self, node: ast.AST, limit: int = 60) -> str:
        """What the learner wrote there, short and on one line (a block by its first line)."""
        try:
            text = ast.get_source_segment(self.source, node) or ast.unparse(node)
        except Exception:  # noqa: BLE001 - a message must not fail the loader
            return type(node).__name__
        if isinstance(node, ast.stmt) and hasattr(node, "body"):
            text = text.splitlines()[0].rstrip(":") + ": ..." if text else text
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 3] + "..."


def _small(value) -> bool:
    """A number a pure call may take: not an integer past MAX_CALL_INT."""
    return isinstance(value, NUMBER) and not (isinstance(value, int) and abs(value) > MAX_CALL_INT)


def _is_namespace(value) -> bool:
    """A module, or one of numba's (or the stand-in's) bags of names: cuda.shared, numba.types."""
    return not isinstance(value, (*NUMBER, str, tuple, list, dict, type(None), pytypes.FunctionType))


def _plain_value(node, value):
    if not isinstance(value, (*NUMBER, str, type(None))):
        raise _Refuse(node, "module-state", "conditions at the top of a kernel file are on numbers and strings.")
    return value


def _literal_slice(node: ast.AST) -> bool:
    return (isinstance(node, ast.Slice) and node.lower is None and node.upper is None
            and (node.step is None or (isinstance(node.step, ast.Constant) and type(node.step.value) is int)))


def _plain(arg: ast.arg) -> ast.arg:
    return ast.copy_location(ast.arg(arg=arg.arg, annotation=None, type_comment=None), arg)


def _own_names(fn: ast.FunctionDef) -> set[str]:
    """The names a function (or one nested in it) binds itself: its parameters and what it assigns
    (`input = a[i]`): none of them is a module's."""
    own = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            own.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn:
            own.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            own.update(node.names)
    return own


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _is_main_guard(stmt: ast.stmt) -> bool:
    if not (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare)):
        return False
    test = stmt.test
    sides = [test.left, *test.comparators]
    return (len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and {type(s) for s in sides} == {ast.Name, ast.Constant}
            and {getattr(s, "id", None) for s in sides} >= {"__name__"}
            and {getattr(s, "value", None) for s in sides} >= {"__main__"})


def _bound_names(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names]
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    names = []
    for t in targets:
        for n in ast.walk(t) if t is not None else ():
            if isinstance(n, ast.Name):
                names.append(n.id)
    return names
