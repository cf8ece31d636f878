"""Turn a learner's source text into a module with the real Numba, and what every loading shares.

The same text is loaded twice when needed: once with our stand-in `numba.cuda` (for the simulator:
sim_loader.py, which builds on this module), once with the real Numba, here (for the compiler check
and the GPU). A local learner's file is executed as the Python it is; an untrusted one (a served
room's learner, a model) is built from its syntax tree and nothing of it runs (module_builder.py).
Problems found here are a learner's, so they come back as LoadError with a kind, a line and a fix.
"""

from __future__ import annotations

import inspect

from ..sim.fakecuda import BadSignature, Unsupported
from .load_error import LoadError


def load_for_numba(source: str, filename: str, signature: list[str] | None = None, *,
                   untrusted: bool = False) -> dict:
    """Load with the real numba (the caller chooses the GPU or NUMBA_ENABLE_CUDASIM)."""
    namespace = load_module_for_numba(source, filename, untrusted=untrusted)

    def is_kernel(k):
        return hasattr(k, "py_func") and not getattr(k, "targetoptions", {}).get("device", False)

    check_kernel(namespace, filename, signature, is_kernel)
    return namespace


def load_module_for_numba(source: str, filename: str, *, untrusted: bool = False) -> dict:
    """Any module with the real numba (a coaching candidate: many kernels and a launch())."""
    namespace = {"__name__": "learner_kernel", "__file__": filename}
    execute(source, filename, namespace, untrusted=untrusted, import_module=_real_module)
    return namespace


def _real_module(name: str):
    import importlib

    return importlib.import_module(name)


def execute(source: str, filename: str, namespace: dict, *, untrusted: bool = False, import_module=None) -> None:
    """Run the file into `namespace`, or, untrusted, build the namespace from its syntax tree with
    `import_module(name)` giving the modules it may import (module_builder.py): then none of it runs."""
    if untrusted:
        from .module_builder import build_module

        build_module(source, filename, namespace, import_module)
        return
    try:
        code = compile(source, filename, "exec")
    except SyntaxError as e:
        raise LoadError.syntax(e) from None
    try:
        exec(code, namespace)
    except Unsupported as e:
        line = _line_in(e, filename)
        raise LoadError.outdented(source, line) or LoadError.unavailable(e.what, line) from None
    except BadSignature as e:
        line = _line_in(e, filename)
        raise LoadError("compile_error", f"@cuda.jit signature (line {line}): {e}.", line) from None
    except BaseException as e:  # a learner's module-level error, SystemExit included
        line = _line_in(e, filename)
        raise LoadError.outdented(source, line) or LoadError.raised(e, line) from None


def check_kernel(namespace, filename, signature, is_kernel) -> None:
    kernel = namespace.get("kernel")
    if kernel is None:
        raise LoadError("compile_error", "The file has no function named `kernel`. Define the puzzle's "
                        "kernel as `@cuda.jit` `def kernel(...)`.")
    if not is_kernel(kernel):
        line = getattr(getattr(kernel, "__code__", None), "co_firstlineno", None)
        raise LoadError("compile_error", "`kernel` must be decorated with `@cuda.jit` (and not "
                        "`device=True`).", line)
    if signature is not None:
        params = list(inspect.signature(kernel.py_func).parameters)
        if len(params) != len(signature):
            raise LoadError(
                "compile_error",
                f"`kernel` takes {len(params)} parameter(s) ({', '.join(params)}) but this puzzle launches it "
                f"with {len(signature)}: kernel({', '.join(signature)}). Keep the starter's signature.",
                kernel.py_func.__code__.co_firstlineno)


def _line_in(exc, filename) -> int | None:
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return exc.lineno
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
