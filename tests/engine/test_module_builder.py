"""An untrusted file is built from its syntax tree: nothing of it runs while it loads, wherever in
the tree it hides (a one-line `def`'s default, a multi-line signature ending in its body, a
decorator, a nested function), and every honest spelling of a kernel file still loads as it does
when executed.

Each attack starts from the case that fooled the screen before it: a finding was dropped when its
line lay inside a function's line range, so a one-line `def z(x=<payload>): pass` ran its payload."""

from __future__ import annotations

import glob
import time
from pathlib import Path

import pytest

from tutor.engine.loading.compile import compile_check, nvvm_missing
from tutor.engine.loading.loader import LoadError, load_module_for_numba
from tutor.engine.loading.module_builder import ModuleRefused
from tutor.engine.loading.sim_loader import load_for_sim, load_module_for_sim
from tutor.puzzles import load_catalog

ROOT = Path(__file__).resolve().parents[2]
MAP = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n"
EMPTY = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    pass\n"


def payload(marker: Path) -> str:
    """Python that leaves a mark if it ever runs (and would read the reference if it could)."""
    return f"exec(\"open({str(marker)!r}, 'w').write(open({str(ROOT / 'content/map/reference.py')!r}).read())\")"


def hiding_places(marker: Path) -> dict[str, str]:
    p = payload(marker)
    return {
        "one-line def default": EMPTY + f"\ndef z(x={p}): pass\n",
        "one-line def keyword default": EMPTY + f"\ndef z(*, x={p}): pass\n",
        "signature ending in its body": EMPTY + f"\ndef z(a,\n      x={p}): return a\n",
        "default of a kernel": f"from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a, b={p}): pass\n",
        "decorator": f"from numba import cuda\n\n\n@cuda.jit(device={p} is None)\ndef kernel(out, a): pass\n",
        "plain decorator": f"from numba import cuda\n\n\n@print({p})\ndef kernel(out, a): pass\n",
        "second decorator": f"from numba import cuda\n\n\n@cuda.jit\n@(lambda f: {p} or f)\ndef kernel(out, a): pass\n",
        "module level": EMPTY + f"X = {p}\n",
        "module expression": EMPTY + f"{p}\n",
        "class body": EMPTY + f"class C:\n    x = {p}\n",
        "if at the top": EMPTY + f"if True:\n    {p}\n",
        "augmented": EMPTY + f"X = 1\nX += {p}\n",
        "signature string": "from numba import cuda\n\n\n@cuda.jit(\"__import__('os').system('touch " + str(marker)
                            + "') or void()\")\ndef kernel(out, a): pass\n",
        "import": EMPTY + "import os\nos.system('touch " + str(marker) + "')\n",
        "linked file": "from numba import cuda\n\n\n@cuda.jit(link=['/etc/passwd'])\ndef kernel(out, a): pass\n",
    }


@pytest.mark.parametrize("loader", ["sim", "numba"])
@pytest.mark.parametrize("where", sorted(hiding_places(Path("/x"))))
def test_nothing_a_file_hides_at_its_top_level_runs_while_it_is_built(tmp_path, where, loader):
    marker = tmp_path / "ran"
    source = hiding_places(marker)[where]
    load = {"sim": load_module_for_sim, "numba": load_module_for_numba}[loader]
    with pytest.raises(LoadError) as refused:
        load(source, "kernel.py", untrusted=True)
    assert not marker.exists()
    error = refused.value
    assert error.kind == "static" and isinstance(error, ModuleRefused), error.message
    line = error.line
    assert line is not None and source.splitlines()[line - 1].strip()  # the line that holds it
    assert error.message.startswith(f"line {line}: ")


def test_the_same_one_line_default_runs_when_the_file_is_a_local_learners_own(tmp_path):
    """The case that fooled the screen, loaded as a local learner's file is (executed): it runs."""
    marker = tmp_path / "ran"
    load_module_for_sim(hiding_places(marker)["one-line def default"], "kernel.py")
    assert marker.exists()


def test_annotations_are_never_evaluated_and_the_kernel_loads(tmp_path):
    marker = tmp_path / "ran"
    source = MAP.replace("def kernel(out, a):", f"def kernel(out, a: {payload(marker)}) -> {payload(marker)}:")
    module = load_for_sim(source, "kernel.py", ["out", "a"], untrusted=True)
    assert callable(module.kernel) and not marker.exists()


def test_a_function_body_is_not_run_by_loading_even_its_nested_defaults(capsys):
    source = MAP + "\n\ndef later():\n    def inner(x=print('ran while loading')):\n        pass\n    return inner\n"
    namespace = load_module_for_sim(source, "kernel.py", untrusted=True).namespace
    assert callable(namespace["later"]) and "ran while loading" not in capsys.readouterr().out


def test_a_function_body_may_not_name_what_only_plain_python_has(tmp_path):
    marker = tmp_path / "ran"
    source = MAP + f"\n\ndef later():\n    def inner(x={payload(marker)}):\n        pass\n    return inner\n"
    with pytest.raises(ModuleRefused) as refused:
        load_module_for_sim(source, "kernel.py", untrusted=True)
    assert refused.value.findings[0].rule == "builtin" and not marker.exists()


def test_a_refusal_says_the_line_what_is_not_allowed_and_what_to_write():
    source = EMPTY + "\nprint('loaded')\nimport os\n\n\ndef z(x=len('abc')): pass\n"
    with pytest.raises(ModuleRefused) as refused:
        load_module_for_sim(source, "kernel.py", untrusted=True)
    messages = {f.line: f.message for f in refused.value.findings}
    assert sorted(messages) == [8, 9, 12]
    assert messages[8] == ("line 8: `print('loaded')` at the top of the file would run as plain Python when the file "
                           "loads. A kernel file's top level may hold only imports of numba, math and numpy, constants "
                           "(e.g. `TPB = 8`, `EPS = 1e-5`, `F32 = numba.float32`) and functions decorated with "
                           "`@cuda.jit`; everything else belongs inside a kernel.")
    assert messages[9] == ("line 9: `import os`: a kernel file may import only numba (e.g. `from numba import cuda, "
                           "float32`), math and numpy.")
    assert messages[12].startswith("line 12: `len('abc')`, a default value in `def z`, would be computed when the "
                                   "file loads; a default may only be a number")
    assert "model" not in " ".join(messages.values()) and "module" not in messages[8]


def test_a_name_from_a_refused_line_is_not_refused_again_where_it_is_used():
    source = "from numba import cuda\nimport os\nSEP = os.sep\n\n\n@cuda.jit\ndef kernel(out, a):\n    pass\n"
    with pytest.raises(ModuleRefused) as refused:
        load_module_for_sim(source, "kernel.py", untrusted=True)
    assert [f.line for f in refused.value.findings] == [2]


def test_a_main_guard_is_left_out_as_python_leaves_it_out(tmp_path):
    marker = tmp_path / "ran"
    source = MAP + f"\n\nif __name__ == \"__main__\":\n    {payload(marker)}\n"
    module = load_for_sim(source, "kernel.py", ["out", "a"], untrusted=True)
    assert callable(module.kernel) and not marker.exists()


@pytest.mark.parametrize("constant", ["10 ** 10 ** 10", "1 << 100000", "'x' * 10 ** 9", "(1,) * 10 ** 9",
                                      "[0] * 1000000", "2 ** 64 * 2 ** 64 * 2 ** 64 * 2 ** 64 * 2 ** 64"])
def test_a_constant_that_would_grow_without_bound_is_refused_at_once(constant):
    with pytest.raises(ModuleRefused):
        load_module_for_sim(EMPTY + f"BIG = {constant}\n", "kernel.py", untrusted=True)


HONEST = {
    "constants and casts": ("import math\nimport numpy as np\nfrom numba import cuda, float32, int32\n\nTPB = 8\n"
                            "HALF = TPB // 2\nEPS = np.float32(1e-5)\nROOT2 = math.sqrt(2.0)\nNEG = -3e38\n"
                            "SHAPE = (TPB, TPB + 1)\nROWS, COLS = SHAPE\nF32 = float32\nMASK = 0xFFFFFFFF\n"
                            "SCALE = float32(0.5) if TPB > 4 else float32(1)\nBITS = int(math.log2(TPB))\n"),
    "annotated constant": "from numba import cuda\n\nTPB: int = 8\n",
    "types module": "from numba import cuda, types\nARR = types.float32[:, ::1]\nSIG = types.void(ARR, types.int32)\n",
    "future import and docstring": '"""My kernels."""\nfrom __future__ import annotations\nfrom numba import cuda\n',
    "aliases": "import numba as nb\nfrom numba import cuda as c\nfrom numba.cuda import jit\nimport numba.types\n",
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_top_levels_build_to_what_executing_them_gives(name):
    source = HONEST[name] + "\n\n@cuda.jit\ndef kernel(out, a):\n    out[0] = a[0]\n" if "cuda" in HONEST[name] \
        else HONEST[name]
    source = source.replace("@cuda.jit", "@c.jit") if name == "aliases" else source
    for load in (load_module_for_sim, lambda s, f, **k: _Namespace(load_module_for_numba(s, f, **k))):
        executed = load(source, "kernel.py").namespace
        built = load(source, "kernel.py", untrusted=True).namespace
        assert _same(executed, built)


class _Namespace:
    def __init__(self, namespace):
        self.namespace = namespace


def _public(namespace: dict) -> dict:
    return {k: v for k, v in namespace.items() if not k.startswith("__")}


def _same(executed: dict, built: dict) -> bool:
    """The same names, the same constants, types and modules of the same kind (the two loads make
    their own objects)."""
    a, b = _public(executed), _public(built)
    assert a.keys() == b.keys()
    for key, value in a.items():
        if isinstance(value, (int, float, str, tuple)) or type(value).__module__ == "numpy":
            assert b[key] == value, key
        else:
            assert type(b[key]) is type(value) and (not callable(value) or repr(b[key]) == repr(value)
                                                    or hasattr(value, "py_func") or hasattr(value, "__code__")), key
    return True


def test_a_device_function_a_plain_helper_and_jit_called_as_a_function_build():
    source = ("from numba import cuda, float32\n\n\n@cuda.jit('float32(float32)', device=True)\ndef half(x):\n"
              "    return x * float32(0.5)\n\n\ndef body(out, a):\n    out[0] = half(a[0])\n\n\nkernel = cuda.jit(body)\n")
    module = load_for_sim(source, "kernel.py", ["out", "a"], untrusted=True)
    assert module.kernel.py_func.__name__ == "body"


def every_kernel_file() -> list[str]:
    catalog = load_catalog()
    files = [f"content/{p.id}/{name}" for p in catalog.ordered() for name in ("reference.py", "starter.py")]
    files += sorted(str(Path(f).relative_to(ROOT)) for f in glob.glob(str(ROOT / "kernels/*/*.py"))
                    if Path(f).name in ("naive.py", "expert.py"))
    return files


@pytest.mark.parametrize("path", every_kernel_file())
def test_every_reference_starter_naive_and_expert_file_builds_as_it_executes(path):
    source = (ROOT / path).read_text()
    executed = load_module_for_sim(source, "kernel.py").namespace
    built = load_module_for_sim(source, "kernel.py", untrusted=True).namespace
    assert _same(executed, built)


@pytest.mark.skipif(nvvm_missing() is not None, reason="NVVM is part of the default install")
def test_the_real_compiler_accepts_a_built_reference_and_refuses_a_built_attack(tmp_path, catalog):
    puzzle = catalog.get("dot")
    types = [("array", "float32", 1)] * 3 + [("int",)]
    assert compile_check(puzzle.reference, "kernel.py", puzzle.signature, types, untrusted=True) is None
    marker = tmp_path / "ran"
    attack = puzzle.reference + f"\n\ndef z(x={payload(marker)}): pass\n"
    failure = compile_check(attack, "kernel.py", puzzle.signature, types, untrusted=True)
    assert failure.kind == "static" and failure.rule == "default-arg" and not marker.exists()


@pytest.mark.parametrize("source, line", [
    (EMPTY + "\n\ndef z():\n    nonlocal q\n", 10),
    (EMPTY + "\n\ndef z(a, a):\n    pass\n", 9),
])
def test_what_only_compiling_finds_is_a_syntax_error_on_its_line_as_when_executed(source, line):
    for untrusted in (False, True):
        with pytest.raises(LoadError) as error:
            load_module_for_sim(source, "kernel.py", untrusted=untrusted)
        assert error.value.kind == "compile_error" and error.value.line == line
        assert error.value.message.startswith(f"SyntaxError on line {line}, column ")


def test_a_constant_sum_too_long_to_walk_is_a_finding_not_a_crash():
    with pytest.raises(ModuleRefused) as refused:
        load_module_for_sim(EMPTY + "N = " + " + ".join(["1"] * 800) + "\n", "kernel.py", untrusted=True)
    assert refused.value.findings[0].rule == "too-deep"


def test_numpy_void_is_not_a_type_to_call_at_the_top_of_a_file():
    with pytest.raises(ModuleRefused):
        load_module_for_sim(EMPTY + "import numpy as np\nBIG = np.void(2 ** 30)\n", "kernel.py", untrusted=True)


def test_a_file_too_long_or_too_deep_is_told_to_the_learner_not_to_a_model():
    with pytest.raises(LoadError) as long:
        load_module_for_sim(EMPTY + "#" * 250_000, "kernel.py", untrusted=True)
    deep = EMPTY + "X = " + "-" * 150 + "1\n"
    with pytest.raises(LoadError) as nested:
        load_module_for_sim(deep, "kernel.py", untrusted=True)
    for said in (long.value.message, nested.value.message):
        assert "candidate" not in said and "module" not in said
    assert "kernel file" in long.value.message and "nests too deeply" in nested.value.message


@pytest.mark.parametrize("constants", [
    "import numpy as np\nONE = np.float32(1.0)\nTEN = ONE * 10\nHALF = np.int32(4) // 2\n",
    "NEG = -float('inf')\nBIG = float('1e30')\n",
    "from numba import float32\nELEVEN = float32(10) + 1\nEPS = float32(1e-5)\n",
])
def test_numpy_scalars_and_casts_are_numbers_in_both_builds(constants):
    import numpy as np

    source = constants + "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    out[0] = a[0]\n"
    built = load_module_for_sim(source, "kernel.py", untrusted=True).namespace
    real = load_module_for_numba(source, "kernel.py", untrusted=True)
    numbers = {k: v for k, v in _public(built).items() if isinstance(v, (int, float, np.number))}
    assert len(numbers) >= 2
    for name, value in numbers.items():
        assert type(real[name]) is type(value) and real[name] == value, name  # the same constant in both


def test_a_default_may_be_a_numpy_scalar():
    source = ("import numpy as np\nfrom numba import cuda\n\n\n@cuda.jit(device=True)\ndef scaled(x, s=np.float32(2)):\n"
              "    return x * s\n")
    assert load_module_for_sim(source, "kernel.py", untrusted=True).namespace["scaled"].__defaults__ == (2.0,)


@pytest.mark.parametrize("constant", ["round(1, -10 ** 8)", "round(1.5, 10 ** 9)", "int(10 ** 30) * 2 ** 64",
                                      "np.int8(((0,) * 4096,) * 4096)", "abs(2 ** 200 * 2 ** 60)"])
def test_a_pure_call_that_would_run_for_hours_or_make_an_array_is_refused_at_once(constant):
    started = time.monotonic()
    with pytest.raises(LoadError):
        load_module_for_sim(EMPTY + f"import numpy as np\nX = {constant}\n", "kernel.py", untrusted=True)
    assert time.monotonic() - started < 2


def test_a_module_reached_through_numba_is_not_numbas_to_give():
    with pytest.raises(ModuleRefused) as refused:
        load_module_for_numba(EMPTY + "import numba\nSYSTEM = numba.cuda.os\n", "kernel.py", untrusted=True)
    assert "the module `os`" in refused.value.findings[0].message


DROPPED_BEFORE_TYPING = {
    "a statement the closure inliner drops": (
        "import numpy as np\nfrom numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n"
        "    def g():\n        return 10\n    out[i] = a[i] + g()\n    t = max(('/etc/hostname',), key=np.fromfile)\n"),
    "a branch decided on a constant": (
        "import numpy as np\nfrom numba import cuda\nTPB = 8\n\n\n@cuda.jit\ndef kernel(out, a):\n"
        "    i = cuda.threadIdx.x\n    if a.ndim == 1:\n        out[i] = a[i] + 10\n    else:\n"
        "        print(np.fromfile('/etc/hostname', dtype=np.uint8))\n"),
}


@pytest.mark.skipif(nvvm_missing() is not None, reason="NVVM is part of the default install")
@pytest.mark.parametrize("what", sorted(DROPPED_BEFORE_TYPING))
def test_numba_types_every_line_of_an_untrusted_kernel(what):
    """What Numba would drop before typing still runs on the simulator, which runs Python: for
    untrusted code the compiler types it all (a GPU's own compile is untouched)."""
    source = DROPPED_BEFORE_TYPING[what]
    types = [("array", "float32", 1)] * 2
    assert compile_check(source, "k.py", ["out", "a"], types) is None  # trusted: Numba drops it, as it always did
    failure = compile_check(source, "k.py", ["out", "a"], types, untrusted=True)
    assert failure.kind == "compile_error"
    assert {"a statement the closure inliner drops": "computes a value nothing uses",
            "a branch decided on a constant": "numpy.fromfile"}[what] in failure.message


def test_an_untrusted_kernels_builtins_on_the_simulator_are_a_kernels_only():
    built = load_module_for_sim(MAP, "kernel.py", untrusted=True).namespace["__builtins__"]
    assert {"range", "len", "min", "print", "float"} <= set(built) and not {"open", "exec", "getattr"} & set(built)
    with pytest.raises(ImportError):
        built["__import__"]("os")
    assert "open" in load_module_for_sim(MAP, "kernel.py").namespace["__builtins__"]  # a learner's own file


def test_a_kernel_may_name_its_own_variable_input_or_type():
    source = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, input):\n    i = cuda.threadIdx.x\n"
              "    type = input[i]\n    out[i] = type + 10\n")
    assert callable(load_for_sim(source, "kernel.py", ["out", "a"], untrusted=True).kernel)


HONEST_SHAPES = {
    "a closure over the kernel's variables": ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n"
                                              "    i = cuda.threadIdx.x\n\n    def read():\n        return a[i]\n\n"
                                              "    out[i] = read() + 10\n"),
    "a debug branch a constant turns off": ("from numba import cuda\nDEBUG = False\nTPB = 4\n\n\n@cuda.jit\n"
                                            "def kernel(out, a):\n    i = cuda.threadIdx.x\n    if DEBUG:\n"
                                            "        print(f'thread {i}', out)\n    if TPB > 32:\n"
                                            "        big = cuda.shared.array(TPB - 64, out.dtype)\n"
                                            "    out[i] = a[i] + 10\n"),
    "constants chosen at the top": ("from numba import cuda\nTPB = 8\nassert TPB % 2 == 0, 'TPB must be even'\n"
                                    "if TPB > 4:\n    TEN = 10\nelse:\n    TEN = 0\n\n\n@cuda.jit\n"
                                    "def kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = a[i] + TEN\n"),
    "typing for annotations, and a main guard with an else": (
        "from typing import Any\nfrom numba import cuda\n\n\n@cuda.jit\ndef kernel(out: Any, a: Any):\n"
        "    i = cuda.threadIdx.x\n\n    def add(input, type):\n        return input + type\n\n"
        "    out[i] = add(a[i], 10)\n\n\nif __name__ == '__main__':\n    print('testing')\nelse:\n    pass\n"),
}


@pytest.mark.skipif(nvvm_missing() is not None, reason="NVVM is part of the default install")
@pytest.mark.parametrize("shape", sorted(HONEST_SHAPES))
def test_honest_shapes_a_reviewer_found_refused_when_served_pass(catalog, shape):
    from tutor.engine.judge import check_sim

    source = HONEST_SHAPES[shape]
    for compile_first in (False, True):  # a learner's own file, and a served one
        verdict = check_sim(catalog.get("map"), source, "map.py", seed=1, compile_first=compile_first).verdict
        assert verdict.passed, (compile_first, verdict.failures)


def test_a_top_level_assert_that_fails_says_so_as_python_would():
    with pytest.raises(LoadError) as error:
        load_module_for_sim("TPB = 7\nassert TPB % 2 == 0, 'TPB must be even'\n", "kernel.py", untrusted=True)
    assert error.value.message == "AssertionError while loading the file: TPB must be even (line 2)."
