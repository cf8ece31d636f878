"""Python's own complaints about a learner's kernel file, said for a learner.

Python reports a syntax error as `invalid syntax (line 7)` and a kernel line pushed out of its
function as `NameError: name 'i' is not defined`: true, and no help to someone who has just
started. Both loaders (loader.py, which runs a learner's own file, and module_builder.py, which
builds a served learner's file without running it) word these failures here, so a learner at
their own terminal, in the app and in a served room reads the same sentence: the line and column,
what Python saw, and what to type. Code a model wrote is screened by static_rules.py, whose words
are written for the model.
"""

from __future__ import annotations

import ast
import re

SYNTAX_ADVICE = ("Look for a missing or extra bracket, colon, comma, operator or quote on this line or at the "
                 "end of the line above")
_BRACKETS = {"(": ")", "[": "]", "{": "}"}
# The names a kernel's body reads that mean nothing at the top of a file.
_THREAD_API = {"threadIdx", "blockIdx", "blockDim", "gridDim", "grid", "gridsize", "syncthreads", "syncwarp",
               "laneid", "shared", "local", "atomic", "shfl_sync", "shfl_down_sync", "shfl_xor_sync",
               "shfl_up_sync", "all_sync", "any_sync", "ballot_sync"}


def syntax_error_message(error: SyntaxError) -> str:
    """`SyntaxError on line 7, column 24: invalid syntax. <what to do>`, for a learner."""
    line, column = error.lineno, error.offset
    if line is None:
        where = "in the file"
    elif column:
        where = f"on line {line}, column {column}"
    else:
        where = f"on line {line}"
    what = (error.msg or "invalid syntax").rstrip(".")
    return f"SyntaxError {where}: {what}. {_syntax_advice(what, error)}."


def _syntax_advice(what: str, error: SyntaxError) -> str:
    text = what.lower()
    opened = re.match(r"'(.)' was never closed", what)
    if opened:
        return f"Add the `{_BRACKETS.get(opened.group(1), ')')}` that closes it"
    if text.startswith("unmatched "):
        return "This bracket closes nothing: remove it, or add the bracket it should close"
    if text.startswith("closing parenthesis"):
        return "Close each bracket with its own kind: `(` with `)`, `[` with `]`"
    if text.startswith("unterminated"):
        return "Close the string with the same quote mark that opens it"
    if text.startswith("expected ':'"):
        return "End the line with a colon: `if`, `for`, `while` and `def` lines end in `:`"
    under = re.match(r"expected an indented block after .* on line (\d+)", what)
    if under or text.startswith("expected an indented block"):
        head = f"line {under.group(1)}" if under else "the line above"
        return f"Indent the lines under {head} by 4 more spaces: they are its block"
    if text.startswith("unexpected indent"):
        return ("This line is indented more than the line above, which does not end in `:`; "
                "line it up with the line above")
    if text.startswith("unindent does not match"):
        return "Line it up with the start of a line above it (a kernel's body is indented by 4 spaces)"
    if "tabs and spaces" in text or isinstance(error, TabError):
        return "Indent with spaces only, 4 for each level (this line mixes tabs and spaces)"
    if "null bytes" in text:
        return "The file holds a NUL character: paste or type the code again as plain text"
    if text.startswith("invalid character") or text.startswith("invalid non-printable"):
        return "Type that character again as plain text (editors and web pages swap in curly quotes and dashes)"
    if "outside function" in text or "outside loop" in text:
        return "Indent it into the function or loop it belongs to"
    if text.startswith("invalid syntax"):
        return SYNTAX_ADVICE
    return "Python runs no line of a file it cannot read, so change this line first"


def outdented_message(source: str, line: int | None) -> str | None:
    """When `line` is in a statement at column 0 that is kernel code pushed out of the function
    above it (it reads that function's parameters or locals, or the thread API), say so: Python
    read it as module code, which runs once when the file loads. None otherwise."""
    if not line:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    function, defined = None, _module_names(tree)
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = stmt
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.ClassDef)):
            function = None
            continue
        if function is None or not stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            continue
        reads = _kernel_reads(stmt, _locals_of(function) - defined)
        if reads is None:
            return None
        missing = f", where `{reads}` does not exist" if reads else ""
        return (f"line {stmt.lineno} starts at column 0, so Python reads it as module code outside "
                f"`{function.name}` (whose body ends on line {function.end_lineno}): it runs once, when the file "
                f"loads{missing}. Indent it, and the lines of its block, by 4 more spaces to put it back "
                f"inside `{function.name}`.")
    return None


def _kernel_reads(stmt: ast.stmt, function_locals: set[str]) -> str | None:
    """The first of the function's own names the statement reads ('' when it reads only the thread
    API); None when it reads neither, so it may well be meant for the top of the file."""
    thread_api = False
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in function_locals:
            return node.id
        if isinstance(node, ast.Attribute) and node.attr in _THREAD_API and isinstance(node.value, ast.Name) \
                and node.value.id == "cuda":
            thread_api = True
    return "" if thread_api else None


def _locals_of(function: ast.FunctionDef) -> set[str]:
    args = function.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _module_names(tree: ast.Module) -> set[str]:
    """Names the top of the file binds itself (constants, imports, functions): a statement that
    reads those may belong at the top."""
    names = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names
