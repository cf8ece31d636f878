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

from .fakecuda import SEVERAL_SIGNATURES, BadSignature, check_signature_fits, kernel_returns_nothing
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
        with no_device_needed(), signatures_deferred() as declared:
            namespace = load_for_numba(source, filename, signature)
            kernel = namespace["kernel"]
            sig = tuple(_numba_type(numba, t) for t in arg_types)
            misfit = _declared_misfit(declared, kernel, "kernel", sig, "this puzzle")
            if misfit:
                return Failure(kind="compile_error", message=misfit, line=kernel.py_func.__code__.co_firstlineno)
            _compile_declared(declared, kernel)
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
        with no_device_needed(), signatures_deferred() as declared:
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
            sig = tuple(_numba_type(numba, t) for t in types)
            misfit = _declared_misfit(declared, kernel, name, sig, "launch()")
            if misfit:
                failures.append({"kind": "compile_error", "line": kernel.py_func.__code__.co_firstlineno,
                                 "message": misfit})
                continue
            with no_device_needed():
                _compile_declared(declared, kernel)
                cuda.compile_ptx(kernel.py_func, sig, cc=CC)
        except Exception as e:
            line, message = trim_numba_error(str(e), filename, source)
            failures.append({"kind": "compile_error", "line": line,
                             "message": f"Numba cannot compile `{name}` for a GPU"
                                        + (f" (line {line})" if line else "") + f": {message}"})
    return failures


@contextmanager
def signatures_deferred():
    """Given a signature, @cuda.jit compiles the kernel as it decorates and loads it onto the GPU,
    which fails with no GPU before the compiler has said anything. While this lasts, a kernel's
    signatures are checked against its function (as Numba checks them) and set aside in the list
    it yields, [(dispatcher, [(parameter types, return type, spelling)])], for `_compile_declared`.
    Device functions still compile as they decorate: that needs no GPU."""
    import numba.cuda
    from numba.cuda.core import sigutils

    real_jit = numba.cuda.jit
    declared: list = []

    def jit(func_or_sig=None, device=False, **options):
        if not (isinstance(func_or_sig, list) or sigutils.is_signature(func_or_sig)):
            return real_jit(func_or_sig, device=device, **options)
        listed = func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]

        def wrap(fn):
            sigs = [_normalized(sig, fn, device) for sig in listed]
            if device:
                return real_jit(func_or_sig, device=True, **options)(fn)
            dispatcher = real_jit(**options)(fn)
            declared.append((dispatcher, sigs))
            return dispatcher

        return wrap

    numba.cuda.jit = jit
    try:
        yield declared
    finally:
        numba.cuda.jit = real_jit


def _normalized(sig, fn, device: bool):
    """(parameter types, return type, spelling) of one signature, with the simulator's words for
    one that does not fit the function."""
    from numba.cuda import types
    from numba.cuda.core import sigutils

    if isinstance(sig, tuple) and any(isinstance(s, str) or hasattr(s, "return_type") for s in sig):
        raise BadSignature(SEVERAL_SIGNATURES)  # a tuple of signatures, not of parameter types
    try:
        args, restype = sigutils.normalize_signature(sig)
    except Exception as e:  # Numba's own words on a signature it cannot read
        raise BadSignature(f"Numba cannot read the signature {sig!r}: {e}") from None
    shown = sig if isinstance(sig, str) else (
        f"{'void' if restype == types.void else _spelled(restype) if restype else ''}"
        f"({', '.join(_spelled(a) for a in args)})")
    check_signature_fits(shown, len(args), fn, device)
    if not device and restype is not None and restype != types.void:
        raise BadSignature(kernel_returns_nothing(shown, fn))
    return args, restype, shown


def _declared_misfit(declared, kernel, name: str, launched: tuple, who: str) -> str | None:
    """A kernel with signatures runs only as one of them: say so when the launch's arguments fit
    none (with one signature, a GPU would not even check, and read the bytes as the wrong type)."""
    sigs = next((s for d, s in declared if d is kernel), None)
    if not sigs:
        return None
    can_convert = kernel.typingctx.can_convert
    for args, _, _ in sigs:
        if all(can_convert(got, want) is not None for got, want in zip(launched, args)):
            return None
    args, _, shown = sigs[0]
    params = kernel.py_func.__code__.co_varnames[:len(args)]
    n = next(i for i, (got, want) in enumerate(zip(launched, args)) if can_convert(got, want) is None)
    several = f"none of the signatures of `{name}` fits: the first, `{shown}`," if len(sigs) > 1 else \
        f"the signature `{shown}` of `{name}`"
    return (f"@cuda.jit signature (line {kernel.py_func.__code__.co_firstlineno}): "
            f"{several} declares `{params[n]}` as `{_spelled(args[n])}`, but {who} passes "
            f"{_described(launched[n])} there: declare it as `{_spelled(launched[n], any_layout=True)}`, or "
            "leave the signature out (`@cuda.jit`) and Numba types each launch itself.")


def _spelled(t, any_layout: bool = False) -> str:
    """A numba type as a learner writes it: float32[:, ::1], int64."""
    if not hasattr(t, "ndim") or not hasattr(t, "dtype"):
        return str(t)
    dims = [":"] * t.ndim
    if not any_layout and t.layout in "CF" and t.ndim:
        dims[-1 if t.layout == "C" else 0] = "::1"
    return f"{t.dtype}[{', '.join(dims)}]"


def _described(t) -> str:
    if hasattr(t, "ndim") and hasattr(t, "dtype"):
        return f"a {t.ndim}-d {t.dtype} array"
    return f"an {t}" if str(t)[0] in "aeiou" else f"a {t}"


def _compile_declared(declared, kernel) -> None:
    """What a GPU would compile as the decorator ran: each of the kernel's own signatures."""
    from numba import cuda

    for dispatcher, sigs in declared:
        if dispatcher is kernel:
            for args, _, _ in sigs:
                cuda.compile_ptx(kernel.py_func, args, cc=CC)


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
