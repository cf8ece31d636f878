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

from ..sim.fakecuda import SEVERAL_SIGNATURES, BadSignature, check_signature_fits, kernel_returns_nothing
from ..sim.index_words import numba_indexing
from .loader import LoadError, load_for_numba
from ..verdict import Failure

CC = (8, 0)  # explicit compute capability: with no device present, the driver cannot be asked
_CACHE: dict = {}
_STATUS: list = []
_PTX: dict = {}  # (source, (kernel name, types)) -> PTX with line information, or None
_KERNELS: dict = {}  # (source, (kernel name, types)) -> (kernel, signature, untrusted) compile_launches compiled
_LAUNCHED: dict = {}  # (source, (kernel name, types)) -> its launch PTX (_launched_build), made when needed
GPU_CC = (9, 0)  # the GPU whose limits the simulator holds kernels to: an H100 / H200


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


def compile_check(source: str, filename: str, signature: list[str], arg_types: list[tuple], *,
                  untrusted: bool = False) -> Failure | None:
    """Compile `kernel` for the types of one launch. arg_types: per parameter ('array', dtype, ndim)
    or ('int',). Returns a compile_error Failure, or None when it compiles. `untrusted`: the file is
    built from its syntax tree, never run (loader.execute)."""
    key = (source, tuple(arg_types), untrusted)
    if key in _CACHE:
        return _CACHE[key]
    result = _compile(source, filename, signature, arg_types, untrusted)
    _CACHE[key] = result
    return result


def _compile(source, filename, signature, arg_types, untrusted):
    import numba
    from numba import cuda

    try:
        with no_device_needed(), signatures_deferred() as declared, every_line_typed(untrusted):
            namespace = load_for_numba(source, filename, signature, untrusted=untrusted)
            kernel = namespace["kernel"]
            sig = tuple(_numba_type(numba, t) for t in arg_types)
            misfit = _declared_misfit(declared, kernel, "kernel", sig, "this puzzle")
            if misfit:
                return Failure(kind="compile_error", message=misfit, line=kernel.py_func.__code__.co_firstlineno)
            _compile_declared(declared, kernel)
            cuda.compile_ptx(kernel.py_func, sig, cc=CC)
    except LoadError as e:
        return Failure(kind=e.kind if e.kind in ("unsupported", "static") else "compile_error",
                       message=e.message, line=e.line, rule=e.rule)
    except Exception as e:
        line, message = trim_numba_error(str(e), filename, source, e)
        return Failure(kind="compile_error",
                       message=("Numba cannot compile this kernel for a GPU"
                                + (f" (line {line})" if line else "") + f": {message}"),
                       line=line)
    return None


def compile_launches(source: str, filename: str, launches, *, untrusted: bool = False) -> list[dict]:
    """Compile every kernel a module launched (as the simulator saw it: name and argument types)
    with the real compiler; one failure per kernel that a GPU would reject."""
    import warnings

    import numba
    from numba import cuda

    from .loader import LoadError, load_module_for_numba

    from .resources import ptxas_refusal

    failures, seen = [], set()
    try:
        with no_device_needed(), signatures_deferred() as declared:
            namespace = load_module_for_numba(source, filename, untrusted=untrusted)
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
            with no_device_needed(), every_line_typed(untrusted), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "could not find source": the lines are known
                _compile_declared(declared, kernel)
                # with line information, for the instruction model (launches_ptx reads it from here)
                _PTX[(source, (name, types))], _ = cuda.compile_ptx(kernel.py_func, sig, cc=CC, lineinfo=True,
                                                                    **_as_decorated(kernel))
                _KERNELS[(source, (name, types))] = (kernel, sig, untrusted)
            # static shared memory and the decorator's max_registers are the same in every build
            refused = ptxas_refusal(_PTX[(source, (name, types))], _max_registers(kernel))
            if refused:  # NVVM made PTX that the GPU's own assembler refuses (resources.py)
                failures.append({"kind": "compile_error", "line": kernel.py_func.__code__.co_firstlineno,
                                 "message": f"Numba compiles `{name}`, but {refused}"})
        except Exception as e:
            line, message = trim_numba_error(str(e), filename, source, e)
            failures.append({"kind": "compile_error", "line": line,
                             "message": f"Numba cannot compile `{name}` for a GPU"
                                        + (f" (line {line})" if line else "") + f": {message}"})
    return failures


def _launched_build(source: str, kernel, sig) -> str | None:
    """The PTX a GPU's driver assembles when `kernel` is launched, built as numba-cuda's dispatcher
    builds it on an H100: for cc 9.0, with the decorator's own options (line information only if
    asked), through link-time optimisation unless `debug` turns that off. ptxas's register count
    depends on each of these: a layernorm counted 64 registers a thread from the model's
    line-information PTX and takes 80 in this build, too many for 1,024 threads. None when this
    build fails here (the model's PTX stands in)."""
    from numba import cuda
    from numba.cuda.cudadrv import driver

    # the file's own decorator, not the kernel's targetoptions: loading turns line information on
    options = _decorator_options(source, kernel.py_func.__name__)
    asked = {k: options[k] for k in ("fastmath", "opt", "debug", "lineinfo") if k in options}
    try:
        if not options.get("debug", False):  # numba-cuda links through LTO unless debug
            code, _ = cuda.compile(kernel.py_func, sig, cc=GPU_CC, output="ltoir", device=False, abi="numba", **asked)
            linker = driver._Linker(cc=GPU_CC, lto=True)
            linker.add_ltoir(code)
            return linker.get_linked_ptx().decode()
        ptx, _ = cuda.compile(kernel.py_func, sig, cc=GPU_CC, output="ptx", device=False, abi="numba", **asked)
        return ptx
    except Exception:  # noqa: BLE001 (an older numba-cuda or no nvJitLink: the model's PTX is counted)
        return None


def _decorator_options(source: str, name: str) -> dict:
    """The literal keywords of `@cuda.jit(...)` on the kernel `name` in the file's text."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call):
                    found = {}
                    for keyword in decorator.keywords:
                        try:
                            found[keyword.arg] = ast.literal_eval(keyword.value)
                        except ValueError:
                            continue
                    return found
    return {}


def _as_decorated(kernel) -> dict:
    """The decorator's options that change the code a GPU runs (`fastmath` trades exact division
    for a reciprocal): the PTX the model reads is the one the GPU would run. Not `opt`: ptxas
    optimises the machine code whatever NVVM did (an `opt=False` kernel whose PTX keeps a dead
    300,000-trip loop ran in 8.7 us on an H100, faster than the naive 40 us)."""
    options = getattr(kernel, "targetoptions", {}) or {}
    return {k: options[k] for k in ("fastmath", "forceinline", "launch_bounds") if k in options}


def launches_ptx(source: str, filename: str, launches, *, untrusted: bool = False) -> dict:
    """{(kernel name, types): its PTX with line information}, for every kernel a module launched
    that the real compiler accepts (one it refuses is left out: compile_launches says why). The
    instruction model reads which instructions each source line became (analysis/instructions.py).
    Cached by source and types: a verification asks for the same kernels at every shape."""
    import warnings

    import numba
    from numba import cuda

    from .loader import LoadError, load_module_for_numba

    wanted = list(dict.fromkeys(launches))
    missing = [k for k in wanted if (source, k) not in _PTX]
    if missing:
        try:
            with no_device_needed(), signatures_deferred():
                namespace = load_module_for_numba(source, filename, untrusted=untrusted)
        except LoadError:
            namespace = {}
        for name, arg_types in missing:
            kernel = namespace.get(name)
            ptx = None
            if kernel is not None and hasattr(kernel, "py_func"):
                try:
                    sig = tuple(_numba_type(numba, t) for t in arg_types)
                    with no_device_needed(), every_line_typed(untrusted), warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # "could not find source": the lines are known
                        ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=CC, lineinfo=True,
                                                  **_as_decorated(kernel))
                except Exception:  # noqa: BLE001 (compile_launches reports the compiler's refusal)
                    ptx = None
            _PTX[(source, (name, arg_types))] = ptx
    return {k: _PTX[(source, k)] for k in wanted if _PTX.get((source, k))}


def launch_resources(source: str, launch: tuple, threads: int) -> tuple[int, int | None, int] | None:
    """(registers a thread, the decorator's max_registers or None, static shared bytes) of a kernel
    compile_launches compiled, launched with blocks of `threads`, as ptxas counts them
    (resources.py); None when its PTX or ptxas is missing here. (launch_bounds, the other bound on
    a block's threads, is an option the loader refuses.)

    Registers are counted in the build a GPU launches (launched_ptx, 1-4 s more of NVVM) only
    where they can matter: blocks of up to 256 threads fit an SM at any count (255 registers x 32,
    rounded to 8,192 a warp, x 8 warps = 65,536); below that the model's PTX gives the shared bytes."""
    from .resources import own_shared, ptxas_report

    ptx = _PTX.get((source, launch))
    if not ptx or (source, launch) not in _KERNELS:
        return None
    if threads > 256:
        ptx = launched_ptx(source, launch)  # the model's PTX where that build fails here
    cap = max_registers(source, launch)
    report = ptxas_report(ptx, cap)
    return None if report is None else (report[0], cap, own_shared(report[2]))


def launched_ptx(source: str, launch: tuple) -> str | None:
    """The PTX a GPU's driver assembles for a kernel compile_launches compiled (_launched_build),
    made once per source and launch; the model's PTX where that build fails here, None where
    compile_launches compiled no such kernel. bench/registers.py counts registers in it too."""
    if (source, launch) not in _KERNELS:
        return None
    if (source, launch) not in _LAUNCHED:
        import warnings

        kernel, sig, untrusted = _KERNELS[(source, launch)]
        with no_device_needed(), every_line_typed(untrusted), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _LAUNCHED[(source, launch)] = _launched_build(source, kernel, sig) or _PTX.get((source, launch))
    return _LAUNCHED[(source, launch)]


def max_registers(source: str, launch: tuple) -> int | None:
    """The decorator's max_registers of a kernel compile_launches compiled (None: none set)."""
    entry = _KERNELS.get((source, launch))
    return _max_registers(entry[0]) if entry else None


def _max_registers(kernel):
    """The decorator's max_registers (None where it set none)."""
    return (getattr(kernel, "targetoptions", {}) or {}).get("max_registers")


# The cuda.* intrinsics whose answer depends on the type Numba gives their argument: the width of
# an integer (clz of 1 is 31 for an int32, 63 for an int64) or the precision of a float.
TYPED_INTRINSICS = ("popc", "clz", "ffs", "brev", "fma", "cbrt")
_TYPED_CALLS: dict = {}


def intrinsic_types(source: str, filename: str, kernel_name: str, arg_types: tuple, *,
                    untrusted: bool = False) -> dict:
    """{(line, intrinsic): the Numba type of its argument there (of its result, for fma and cbrt)}
    for one launch of `kernel_name`, as Numba's own type inference decides it, device functions
    included. The simulator computes with Python ints and floats, which carry no width: it asks
    here, once per launch typing, and answers each call as the GPU would for that type. A line where
    one intrinsic is typed two ways (a device function called with an int32 and an int64) maps to
    None. {} when Numba cannot type the kernel (the compile check says why) or is missing here."""
    key = (source, filename, kernel_name, tuple(arg_types), untrusted)
    if key not in _TYPED_CALLS:
        if len(_TYPED_CALLS) >= 64:  # a warm child sees a new source at every run of watch mode
            _TYPED_CALLS.clear()
        try:
            _TYPED_CALLS[key] = _intrinsic_types(source, filename, kernel_name, arg_types, untrusted)
        except Exception:
            _TYPED_CALLS[key] = {}
    return _TYPED_CALLS[key]


def _intrinsic_types(source, filename, kernel_name, arg_types, untrusted) -> dict:
    import numba
    from numba.cuda.compiler import compile_cuda

    from .loader import load_module_for_numba

    with no_device_needed(), signatures_deferred():
        namespace = load_module_for_numba(source, filename, untrusted=untrusted)
        kernel = namespace.get(kernel_name)
        if kernel is None or not hasattr(kernel, "py_func"):
            return {}
        sig = tuple(_numba_type(numba, t) for t in arg_types)
        cres = compile_cuda(kernel.py_func, None, sig, cc=CC)
    seen: dict = {}
    _collect_intrinsic_types(cres.fndesc, filename, seen, set())
    return {k: (next(iter(v)) if len(v) == 1 else None) for k, v in seen.items()}


def _collect_intrinsic_types(fndesc, filename, seen: dict, visited: set) -> None:
    from numba.core import types as core_types

    if id(fndesc) in visited:
        return
    visited.add(id(fndesc))
    for expr, sig in fndesc.calltypes.items():
        if getattr(expr, "op", None) != "call" or sig is None:
            continue
        fnty = fndesc.typemap.get(expr.func.name)
        if isinstance(fnty, core_types.Dispatcher):  # a device function: its own calls, typed for these args
            overload = getattr(fnty.dispatcher, "overloads", {}).get(tuple(sig.args))
            if getattr(overload, "fndesc", None) is not None:
                _collect_intrinsic_types(overload.fndesc, filename, seen, visited)
            continue
        stub = getattr((getattr(fnty, "templates", None) or [None])[0], "key", None)
        name = getattr(stub, "__name__", None)
        loc = getattr(expr, "loc", None)
        if (name not in TYPED_INTRINSICS or getattr(stub, "__module__", "") != "numba.cuda.stubs" or loc is None
                or not (str(loc.filename).endswith(filename) or filename.endswith(str(loc.filename)))):
            continue
        typed = sig.return_type if name in ("fma", "cbrt") else (sig.args[0] if sig.args else None)
        seen.setdefault((loc.line, name), set()).add(str(typed))


class UnusedCall(Exception):
    def __init__(self, line: int):
        super().__init__(f"the call on line {line} computes a value nothing uses, which Numba would drop without "
                         "checking it; use its value or leave it out")


@contextmanager
def every_line_typed(untrusted: bool = True):
    """While it lasts, Numba types every line of a kernel, the branches it could decide on constants
    and the calls it could drop as unused included. Untrusted code's kernels run on our simulator as
    Python once this compiler has accepted them: a branch Numba prunes before typing (`if A is B:`
    on two globals), or a call its closure inliner drops as dead (`max(..., key=exec)` after an inner
    function's call), would run there unchecked. The simulator takes whichever branch Python takes,
    so both must pass the compiler (the module builder has already cut the branches a module
    constant decides, as Python would); the inliner still clears what inlining leaves (the inner
    function's own making), but a call it would drop is refused. What a GPU runs is compiled
    elsewhere, unchanged."""
    if not untrusted:
        yield
        return
    import numba.cuda.core.analysis as analysis
    import numba.cuda.core.inline_closurecall as inlining
    import numba.cuda.core.untyped_passes as untyped
    from numba.cuda.core import ir

    clear = inlining.dead_code_elimination

    def keep_every_branch(func_ir, called_args):
        return None

    def drop_no_call(func_ir, *args, **kwargs):
        calls = {id(st): st for block in func_ir.blocks.values() for st in block.body
                 if isinstance(st, ir.Assign) and isinstance(st.value, ir.Expr) and st.value.op == "call"}
        result = clear(func_ir, *args, **kwargs)
        kept = {id(st) for block in func_ir.blocks.values() for st in block.body}
        dropped = [st for key, st in calls.items() if key not in kept]
        if dropped:
            raise UnusedCall(dropped[0].loc.line)
        return result

    saved = analysis.dead_branch_prune, untyped.dead_branch_prune, inlining.dead_code_elimination
    analysis.dead_branch_prune = untyped.dead_branch_prune = keep_every_branch
    inlining.dead_code_elimination = drop_no_call
    try:
        yield
    finally:
        analysis.dead_branch_prune, untyped.dead_branch_prune, inlining.dead_code_elimination = saved


@contextmanager
def signatures_deferred():
    """Given a signature, @cuda.jit compiles the kernel as it decorates and loads it onto the GPU,
    which fails with no GPU before the compiler has said anything. While this lasts, a kernel's
    signatures are checked against its function (as Numba checks them) and set aside in the list
    it yields, [(dispatcher, [(parameter types, return type, spelling)])], for `_compile_declared`.
    Device functions still compile as they decorate: that needs no GPU. Every function is compiled
    with line information (it changes no instruction)."""
    import numba.cuda
    from numba.cuda.core import sigutils

    real_jit = numba.cuda.jit
    declared: list = []

    def jit(func_or_sig=None, device=False, **options):
        # line information in every function, device functions too: inlined into a kernel, a
        # device function's instructions keep their own lines (analysis/instructions.py counts them)
        options.setdefault("lineinfo", True)
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
        dtype, ndim, layout = t[1], t[2], t[3] if len(t) > 3 else "C"
        return numba.types.Array(getattr(numba, dtype), ndim, layout)
    if t[0] == "tuple":
        return numba.types.BaseTuple.from_types([_numba_type(numba, item) for item in t[1]])
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
_NO_ATTRIBUTE = re.compile(r"^module '([\w.]+)' has no attribute '(\w+)'$")
_GLOBAL_LOWERED = re.compile(r'During: lowering "[^"]*= global\((\w+): (.*)\)" at ')
_CANDIDATES = re.compile(r"^There are \d+ candidate implementations")
_SENTENCE_END = re.compile(r"[.?!](?=\s)")
MESSAGE_LIMIT = 300  # Numba's words in a failure, so that the whole failure reads in one breath


def trim_numba_error(text: str, filename: str, source: str = "", exc: BaseException | None = None
                     ) -> tuple[int | None, str]:
    """Numba's messages run to dozens of lines; keep the learner's line and the first thing Numba
    says went wrong, in whole sentences. `exc`, the exception itself, finds the line when the
    message names none (see _line_in_traceback)."""
    line = _line_in_text(text, filename)
    if line is None and exc is not None:
        line = _line_in_traceback(exc, filename)
    name = _UNDEFINED.search(text)
    if line is None and name and source:  # Numba does not say where an unknown name is used
        pattern = re.compile(rf"\b{re.escape(name.group(1))}\b")
        for n, src_line in enumerate(source.splitlines(), 1):
            code = src_line.split("#", 1)[0]
            if pattern.search(code) and not code.lstrip().startswith(("def ", "import ", "from ")):
                line = n
                break
    message = _first_sentences(text)
    lines = source.splitlines()
    if line is not None and 0 < line <= len(lines):
        message = numba_indexing(message, lines[line - 1], _array_names(source)) or message
    return line, message


def _array_names(source: str) -> set[str]:
    """Names a file makes arrays: every function's parameters and what it allocates with
    cuda.shared/local/const.array; a subscript of one of them is not the one that indexed a number."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            names |= {a.arg for a in node.args.args}
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Attribute) and node.value.func.attr in ("array", "array_like"):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _line_in_text(text: str, filename: str) -> int | None:
    for m in list(_FILE_LINE.finditer(text)) + list(_AT_LINE.finditer(text)):
        if m.group(1).endswith(filename) or filename.endswith(m.group(1)):
            return int(m.group(2))
    return None


def _line_in_traceback(exc: BaseException, filename: str) -> int | None:
    """The learner's line that the compiler was working on when it gave up, from the frames the
    exception passed through. numba-cuda adds the line to a message only for its own error classes:
    an error raised by Numba's core (no overload of `abs` for an array) or a plain AttributeError
    (`cuda.syncthread`) reaches us with no location, yet the type-inference and lowering frames it
    came through hold the IR location (`loc`) of the statement being typed. The deepest one in the
    learner's file is the most precise: inside a device function rather than at its call."""
    line = None
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        tb = exc.__traceback__
        while tb is not None:
            found = _frame_line(tb.tb_frame.f_locals, filename)
            if found is not None:
                line = found
            tb = tb.tb_next
        if line is not None:
            return line
        exc = exc.__cause__ or exc.__context__
    return None


def _frame_line(frame_locals: dict, filename: str) -> int | None:
    for name in ("loc", "inst", "stmt", "expr", "constraint"):
        value = frame_locals.get(name)
        loc = value if name == "loc" else getattr(value, "loc", None)
        loc_file = getattr(loc, "filename", None)
        loc_line = getattr(loc, "line", None)
        if isinstance(loc_file, str) and isinstance(loc_line, int) and loc_line > 0 and (
                loc_file.endswith(filename) or filename.endswith(loc_file)):
            return loc_line
    return None


def _first_sentences(text: str) -> str:
    """What Numba says went wrong first: its first paragraph (after the pipeline headers, the
    `During:` trail and the quoted source), together with the line it introduces when it ends in
    a colon ("... found for signature:" then the signature), never the list of candidates that
    follows. Cut, when it must be, after a whole sentence, and ended with a full stop."""
    paragraphs, current = [], []
    for raw in text.splitlines():
        s = re.sub(r"\x1b\[[0-9;]*m", "", raw).strip()
        if _DURING.match(s) or _HEADER.match(s) or _FILE_LINE.search(s) or s.startswith(("^", "<source")):
            continue
        if not s:
            if current:
                paragraphs.append(current)
                current = []
            continue
        current.append(s)
    if current:
        paragraphs.append(current)
    lowered = _GLOBAL_LOWERED.search(text)
    if lowered and (not paragraphs or paragraphs[0][0].startswith("<numba.")):
        return _global_cannot_be_read(*lowered.groups())
    if not paragraphs:
        return text.strip().splitlines()[0] if text.strip() else "Numba gave no reason."
    keep = []
    for n, paragraph in enumerate(paragraphs):
        for s in paragraph:
            if _CANDIDATES.match(s):
                break
            keep.append(s.removeprefix(">>> "))
        else:
            if keep and keep[-1].endswith(":") and n + 1 < len(paragraphs):
                continue  # the next paragraph is what this one introduces
        break
    message = " ".join(keep)
    match = _NO_ATTRIBUTE.match(message)
    if match:
        message = _unknown_attribute(*match.groups())
    if "NRT required but not enabled" in message:
        message = ("It builds a Python object (a list, a dict, a string...) that needs memory management, "
                   "which GPU kernels do not have; use a cuda.local.array or scalars instead.")
    return _whole_sentences(message)


def _whole_sentences(message: str, limit: int = MESSAGE_LIMIT) -> str:
    message = message.strip().rstrip(":").rstrip()
    if len(message) > limit:
        ends = [m.end() for m in _SENTENCE_END.finditer(message + " ") if m.end() <= limit]
        if ends:
            message = message[:ends[-1]]
        else:  # one sentence longer than the limit: cut between words, and say so
            message = message[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " ..."
    if not message.endswith((".", "?", "!", "...")):
        message += "."
    return message


def _unknown_attribute(module: str, attr: str) -> str:
    import difflib

    shown = "cuda" if module == "numba.cuda" else module
    message = f"there is no `{shown}.{attr}` in {module}"
    try:
        import importlib

        names = [n for n in dir(importlib.import_module(module)) if not n.startswith("_")]
    except Exception:
        names = []
    near = [n for n in names if n.lower() == attr.lower()] or difflib.get_close_matches(attr, names, n=1, cutoff=0.75)
    if not near:
        return message + "."
    case = " Python names are case-sensitive." if near[0].lower() == attr.lower() else ""
    return f"{message}: did you mean `{shown}.{near[0]}`?{case}"


def _global_cannot_be_read(name: str, value: str) -> str:
    """numba-cuda accepts a global list or set while typing and fails while lowering it, with its
    own internal object's repr for a message; say what happened instead."""
    kind = "list" if value.startswith("[") else "set" if value.startswith("{") else "Python object"
    return (f"The global `{name}` is a {kind}, which a kernel cannot read: make it a tuple "
            f"(`{name} = (...)`) or pass it in as an array.")


@contextmanager
def no_device_needed(cc: tuple = CC):
    """Device helper functions ask the driver for the current device's compute capability; with no
    GPU there is none, so answer with the one we compile for, for as long as the block lasts."""
    import warnings

    import numba.cuda.dispatcher as dispatcher

    # every function is compiled with line information (signatures_deferred); a file built from its
    # syntax tree has no source for Numba to read, and its lines are right all the same
    warnings.filterwarnings("ignore", message="Could not find source for function")

    original = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = original
