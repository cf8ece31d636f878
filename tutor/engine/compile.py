"""The real Numba compiler as a check: would this file compile for a GPU?

Our simulator runs plain Python, so it accepts things a GPU rejects (a list inside a kernel, a
function Numba cannot type). numba-cuda compiles a kernel to PTX with no GPU present when NVVM is
installed (numba-cuda's `cu13` extra brings it), which closes that gap on a laptop. Where NVVM is
missing, the check is skipped with one note in the verdict, never a failure.
"""

from __future__ import annotations

import re
import types
from contextlib import contextmanager

from .loader import LoadError, load_for_numba
from .verdict import Failure

CC = (8, 0)  # explicit compute capability: with no device present, the driver cannot be asked
_CACHE: dict = {}
_STATUS: list = []


def nvvm_missing() -> str | None:
    """None when the compiler works here; else why it does not (checked once per process)."""
    if _STATUS:
        return _STATUS[0]
    reason = None
    try:
        from numba import cuda, float32

        def probe(out):
            out[0] = 1.0

        with no_device_needed():
            cuda.compile_ptx(probe, (float32[::1],), cc=CC)
    except Exception as e:  # NVVM or numba-cuda missing or broken: say so once
        reason = (f"the real-compiler check was skipped: numba-cuda could not compile here "
                  f"({type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}). "
                  "Install NVVM with: pip install 'numba-cuda[cu13]'")
    _STATUS.append(reason)
    return reason


def compiler_required(what: str) -> str | None:
    """Why `what` (code a model wrote) cannot run here, when the real compiler is missing: such code
    runs only after the compiler has accepted it. None when the compiler works."""
    missing = nvvm_missing()
    if missing is None:
        return None
    return (f"{what} runs only after the real Numba compiler has accepted it, and "
            f"{missing.removeprefix('the real-compiler check was skipped: ')}")


def compile_check(source: str, filename: str, signature: list[str], arg_types: list[tuple]) -> Failure | None:
    """Compile `kernel` for the types of one launch. arg_types: per parameter ('array', dtype, ndim)
    or ('int',). Returns a compile_error Failure, or None when it compiles."""
    key = (source, tuple(arg_types))
    if key in _CACHE:
        return _CACHE[key]
    result = _compile(source, filename, signature, arg_types)
    _CACHE[key] = result
    return result


def _compile(source, filename, signature, arg_types):
    import numba
    from numba import cuda

    try:
        with no_device_needed():
            namespace = load_for_numba(source, filename, signature)
            kernel = namespace["kernel"]
            sig = tuple(_numba_type(numba, t) for t in arg_types)
            cuda.compile_ptx(kernel.py_func, sig, cc=CC)
    except LoadError as e:
        return Failure(kind="compile_error" if e.kind != "unsupported" else "unsupported",
                       message=e.message, line=e.line)
    except Exception as e:
        line, message = trim_numba_error(str(e), filename, source)
        return Failure(kind="compile_error",
                       message=("Numba cannot compile this kernel for a GPU"
                                + (f" (line {line})" if line else "") + f": {message}"),
                       line=line)
    return None


def compile_launches(source: str, filename: str, launches) -> list[dict]:
    """Compile every kernel a module launched (as the simulator saw it: name and argument types)
    with the real compiler; one failure per kernel that a GPU would reject."""
    import numba
    from numba import cuda

    from .loader import LoadError, load_module_for_numba

    failures, seen = [], set()
    try:
        with no_device_needed():
            namespace = load_module_for_numba(source, filename)
    except LoadError as e:
        return [{"kind": "compile_error", "message": e.message, "line": e.line}]
    for name, types in launches:
        if (name, types) in seen:
            continue
        seen.add((name, types))
        kernel = namespace.get(name)
        if kernel is None or not hasattr(kernel, "py_func"):
            continue
        try:
            with no_device_needed():
                cuda.compile_ptx(kernel.py_func, tuple(_numba_type(numba, t) for t in types), cc=CC)
        except Exception as e:
            line, message = trim_numba_error(str(e), filename, source)
            failures.append({"kind": "compile_error", "line": line,
                             "message": f"Numba cannot compile `{name}` for a GPU"
                                        + (f" (line {line})" if line else "") + f": {message}"})
    return failures


def _numba_type(numba, t):
    if t[0] == "array":
        _, dtype, ndim = t
        base = getattr(numba, dtype)
        return base[(slice(None),) * (ndim - 1) + (slice(None, None, 1),)] if ndim > 1 else base[::1]
    if t[0] == "float":
        return numba.float64
    if t[0] == "bool":
        return numba.boolean
    return numba.int64


_DURING = re.compile(r"^\s*During:")
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')
_AT_LINE = re.compile(r"at (\S+) \((\d+)\)")
_UNDEFINED = re.compile(r"NameError: name '(\w+)' is not defined")
_HEADER = re.compile(r"^Failed in \S+ mode pipeline \(step: [^)]*\)\s*$")


def trim_numba_error(text: str, filename: str, source: str = "") -> tuple[int | None, str]:
    """Numba's messages run to dozens of lines; keep the learner's line and what went wrong."""
    line = None
    for m in list(_FILE_LINE.finditer(text)) + list(_AT_LINE.finditer(text)):
        if m.group(1).endswith(filename) or filename.endswith(m.group(1)):
            line = int(m.group(2))
            break
    name = _UNDEFINED.search(text)
    if line is None and name and source:  # Numba does not say where an unknown name is used
        pattern = re.compile(rf"\b{re.escape(name.group(1))}\b")
        for n, src_line in enumerate(source.splitlines(), 1):
            code = src_line.split("#", 1)[0]
            if pattern.search(code) and not code.lstrip().startswith(("def ", "import ", "from ")):
                line = n
                break
    keep = []
    for raw in text.splitlines():
        s = re.sub(r"\x1b\[[0-9;]*m", "", raw).rstrip()
        if not s.strip() or _DURING.match(s) or _HEADER.match(s.strip()):
            continue
        if _FILE_LINE.search(s) or s.strip().startswith(("^", "<source")):
            continue
        if "NRT required but not enabled" in s:
            s = ("it builds a Python object (a list, a dict, a string...) that needs memory management, "
                 "which GPU kernels do not have; use a cuda.local.array or scalars instead")
        keep.append(s.strip())
        if len(keep) >= 4:
            break
    return line, " ".join(keep) if keep else text.strip().splitlines()[0]


@contextmanager
def no_device_needed(cc: tuple = CC):
    """Device helper functions ask the driver for the current device's compute capability; with no
    GPU there is none, so answer with the one we compile for, for as long as the block lasts."""
    import numba.cuda.dispatcher as dispatcher

    original = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = original
