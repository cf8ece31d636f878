"""A learner's file loaded against our simulator: its `numba` is the stand-in of fakecuda.py.

Kept apart from loader.py (the real Numba's side, and what both share) because this side builds on
everything the simulator is: the stand-in module, the simulator's kernel, and Numba's own typing of
the intrinsics (compile.py, which itself loads with the real Numba). Here the three meet, and none
of them imports another back.
"""

from __future__ import annotations

import builtins
import functools
import math
import typing

import numpy

from . import compile as numba_compile
from ..sim.fakecuda import FakeCuda, FakeNumba, Unsupported
from .loader import check_kernel, execute
from ..sim.launch import SimKernel


# What an untrusted kernel's Python sees as builtins on the simulator: what Numba compiles in a kernel.
# Numba's compiler accepts a kernel before it runs here; should a line it never typed run anyway,
# there is no open, exec, getattr or __import__ to reach for.
KERNEL_BUILTINS = ("abs", "all", "any", "bool", "complex", "divmod", "enumerate", "float", "int", "isinstance",
                   "len", "max", "min", "pow", "print", "range", "reversed", "round", "slice", "sum", "tuple", "zip",
                   "ArithmeticError", "AssertionError", "Exception", "IndexError", "KeyError", "NotImplementedError",
                   "OverflowError", "RuntimeError", "StopIteration", "TypeError", "ValueError", "ZeroDivisionError")


def _no_import(name, *args, **kwargs):
    raise ImportError(f"import {name}: a kernel imports nothing")


class SimModule:
    """A learner's file loaded against the simulator."""

    def __init__(self, namespace: dict, cuda: FakeCuda, filename: str, source: str):
        self.namespace = namespace
        self.cuda = cuda
        self.filename = filename
        self.source = source
        self.lines = source.splitlines()

    @property
    def kernel(self):
        return self.namespace["kernel"]


def load_for_sim(source: str, filename: str, signature: list[str] | None = None, *,
                 untrusted: bool = False) -> SimModule:
    module = load_module_for_sim(source, filename, untrusted=untrusted)
    check_kernel(module.namespace, filename, signature, lambda k: isinstance(k, SimKernel))
    return module


def load_module_for_sim(source: str, filename: str, *, untrusted: bool = False) -> SimModule:
    """Any module against the simulator (a coaching candidate has many kernels and a launch())."""
    cuda = FakeCuda(source, filename, kernel_class=SimKernel,
                    intrinsic_types=functools.partial(_intrinsic_types, untrusted=untrusted))
    numba = FakeNumba(cuda)
    real_import = builtins.__import__
    modules = {"numba": numba, "numba.cuda": cuda, "numba.types": numba.types, "numba.core": numba.core,
               "numba.core.types": numba.core.types, "numba.cuda.types": cuda.types}

    def hooked_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "numba" or name.startswith("numba."):
            if name not in modules:
                raise Unsupported(f"import {name}")
            return modules[name] if fromlist else numba  # `import numba.types` binds `numba`
        return real_import(name, globals, locals, fromlist, level)

    fake_builtins = dict(vars(builtins)) if not untrusted else {k: vars(builtins)[k] for k in KERNEL_BUILTINS}
    fake_builtins["__import__"] = hooked_import if not untrusted else _no_import
    namespace = {"__name__": "learner_kernel", "__file__": filename, "__builtins__": fake_builtins}
    importable = {**modules, "math": math, "numpy": numpy, "typing": typing}
    execute(source, filename, namespace, untrusted=untrusted, import_module=importable.__getitem__)
    return SimModule(namespace, cuda, filename, source)


def _intrinsic_types(*args, **kwargs) -> dict:
    """compile.intrinsic_types, looked up at each call: one name for it in the whole engine, so that
    whatever stands in for it (a test without a compiler) stands in everywhere, and only while it does."""
    return numba_compile.intrinsic_types(*args, **kwargs)
