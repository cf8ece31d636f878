"""The ways numba-cuda's own examples import types and write signatures all load, run the same on
the simulator and pass the real-compiler check; a signature that cannot work says why, on its line."""

import textwrap

import numpy as np
import pytest

from tutor.engine.judge import check_sim, simulate
from tutor.engine.loading.compile import compile_check, nvvm_missing
from tutor.engine.loading.loader import LoadError
from tutor.engine.loading.sim_loader import load_for_sim, load_module_for_sim

needs_nvvm = pytest.mark.skipif(nvvm_missing() is not None, reason="NVVM is part of the default install; "
                                "this only skips on a machine installed without numba-cuda[cu13]")

SCALE = """
def kernel(out, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] * {f32}(2.5) + {f32}(1)
"""
# Each: the imports and decorator as numba-cuda's examples write them, and what `float32` is called.
SPELLINGS = {
    "from numba.cuda import float32": ("from numba import cuda\nfrom numba.cuda import float32\n\n@cuda.jit", "float32"),
    "object signature from numba": ("from numba import cuda, float32, int32, void\n\n"
                                    "@cuda.jit(void(float32[:], float32[:]))", "float32"),
    "import numba.types": ("import numba.types\nfrom numba import cuda\n\n@cuda.jit", "numba.types.float32"),
    "from numba import types": ("from numba import cuda, types\n\n@cuda.jit((types.float32[:], types.float32[:]))",
                                "types.float32"),
    "from numba.types import float32": ("from numba import cuda\nfrom numba.types import float32\n\n@cuda.jit",
                                        "float32"),
    "from numba.core import types": ("from numba import cuda\nfrom numba.core import types\n\n@cuda.jit",
                                     "types.float32"),
    "string signature": ("from numba import cuda\nfrom numba.cuda import float32\n\n"
                         "@cuda.jit('void(float32[:], float32[:])')", "float32"),
    "contiguous string signature": ("from numba import cuda, float32\n\n@cuda.jit('void(float32[::1], float32[::1])')",
                                    "float32"),
    "list of signatures": ("from numba import cuda, float32, float64, void\n\n"
                           "@cuda.jit([void(float64[:], float64[:]), void(float32[:], float32[:])])", "float32"),
}


def spelled(name: str) -> str:
    header, f32 = SPELLINGS[name]
    return header + SCALE.format(f32=f32)


@pytest.mark.parametrize("name", SPELLINGS)
def test_numba_cuda_spellings_run_on_the_simulator_as_numpy_computes(name):
    # before: LoadError "`cuda.float32` / `numba.void` / `import numba.types` ... is not available"
    a = np.linspace(-3, 3, 40, dtype=np.float32)
    out = np.zeros_like(a)
    _, failures = simulate(spelled(name), [2], [32], [("out", out), ("a", a)])
    assert failures == []
    np.testing.assert_allclose(out, a * np.float32(2.5) + 1, rtol=1e-6)


@needs_nvvm
@pytest.mark.parametrize("name", SPELLINGS)
def test_numba_cuda_spellings_pass_the_real_compiler_check(name):
    # before: a signature made Numba compile and load the kernel as it decorated, so with no GPU the
    # check failed with "CudaSupportError ... CUDA driver library cannot be found"
    assert compile_check(spelled(name), "kernel.py", ["out", "a"],
                         [("array", "float32", 1), ("array", "float32", 1)]) is None


ROW_SUMS = """\
from numba import cuda
from numba.cuda import float32, int32

@cuda.jit("{sig}")
def kernel(out, m, n):
    r = cuda.grid(1)
    if r < out.size:
        s = float32(0)
        for c in range(n):
            s += m[r, c]
        out[r] = s
"""


@pytest.mark.parametrize("sig", ["void(float32[:], float32[:,:], int32)", "void(float32[::1], float32[:, ::1], int32)"])
def test_a_two_dimensional_signature_with_a_scalar_runs_and_compiles(sig):
    source = ROW_SUMS.format(sig=sig)
    m = np.arange(24, dtype=np.float32).reshape(6, 4)
    out = np.zeros(6, dtype=np.float32)
    _, failures = simulate(source, [1], [8], [("out", out), ("m", m), ("n", 4)])
    assert failures == []
    np.testing.assert_allclose(out, m.sum(axis=1))
    if nvvm_missing() is None:
        assert compile_check(source, "kernel.py", ["out", "m", "n"],
                             [("array", "float32", 1), ("array", "float32", 2), ("int",)]) is None


DEVICE = """\
from numba import cuda
from numba.cuda import float32


@cuda.jit("float32(float32)", device=True)
def halve(x):
    return x * float32(0.5)


@cuda.jit(device=True)
def clamp(x):
    return min(max(x, float32(-1)), float32(1))


@cuda.jit("void(float32[:], float32[:])")
def kernel(out, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = clamp(halve(a[i]))
"""


def test_device_functions_with_and_without_a_signature_run_and_compile():
    a = np.linspace(-4, 4, 16, dtype=np.float32)
    out = np.zeros_like(a)
    _, failures = simulate(DEVICE, [1], [16], [("out", out), ("a", a)])
    assert failures == []
    np.testing.assert_allclose(out, np.clip(a * 0.5, -1, 1))
    if nvvm_missing() is None:
        assert compile_check(DEVICE, "kernel.py", ["out", "a"],
                             [("array", "float32", 1), ("array", "float32", 1)]) is None


MAP_WITH_SIGNATURE = """\
from numba import cuda
from numba.cuda import float32


@cuda.jit("void(float32[:], float32[:])")
def kernel(out, a):
    local_i = cuda.threadIdx.x
    out[local_i] = a[local_i] + float32(10)
"""


def test_a_map_solution_with_a_string_signature_passes_the_puzzle_check(catalog):
    # before: "`cuda.float32` is not available in a kernel file; ..." and the puzzle failed
    verdict = check_sim(catalog.get("map"), MAP_WITH_SIGNATURE, seed=3).verdict
    assert verdict.passed, verdict.failures


# -- signatures that cannot work ------------------------------------------------------------------
TOO_FEW = """\
from numba import cuda, float32, void


@cuda.jit(void(float32[:]))
def kernel(out, a):
    out[cuda.grid(1)] = a[0]
"""


def test_a_signature_with_too_few_types_is_a_load_error_on_its_line():
    # before: "`numba.void` is not available in a kernel file" on line 1
    with pytest.raises(LoadError) as e:
        load_for_sim(TOO_FEW, "kernel.py", ["out", "a"])
    assert e.value.kind == "compile_error" and e.value.line == 4
    assert e.value.message == (
        "@cuda.jit signature (line 4): the signature `void(float32[:])` gives 1 parameter type(s), but `kernel` "
        "takes 2 (out, a): give one type per parameter, in order, e.g. `void(float32[:], float32[:])`.")


@needs_nvvm
def test_the_real_compiler_check_words_a_too_short_signature_as_the_simulator_does():
    # before: "TypeError while loading the file: Signature mismatch: 1 argument types given, ..."
    failure = compile_check(TOO_FEW, "kernel.py", ["out", "a"], [("array", "float32", 1), ("array", "float32", 1)])
    assert failure.kind == "compile_error" and failure.line == 4
    assert "gives 1 parameter type(s), but `kernel` takes 2 (out, a)" in failure.message


def test_a_device_function_signature_of_the_wrong_length_suggests_a_device_signature():
    source = DEVICE.replace('"float32(float32)"', '"float32(float32, float32)"')
    with pytest.raises(LoadError) as e:
        load_module_for_sim(source, "kernel.py")
    assert e.value.line == 5 and "`halve` takes 1 (x)" in e.value.message and "`float32(float32)`" in e.value.message


def test_a_kernel_signature_with_a_return_type_says_kernels_return_void():
    source = MAP_WITH_SIGNATURE.replace('"void(', '"float32(')
    with pytest.raises(LoadError) as e:
        load_module_for_sim(source, "kernel.py")
    assert e.value.line == 5 and "a kernel returns nothing: start its signature with `void`" in e.value.message


def test_a_tuple_of_signatures_is_refused_with_the_list_spelling():
    source = ("from numba import cuda, float32, float64, void\n\n"
              "@cuda.jit((void(float64[:], float64[:]), void(float32[:], float32[:])))" + SCALE.format(f32="float32"))
    with pytest.raises(LoadError) as e:
        load_module_for_sim(source, "kernel.py")
    assert e.value.line == 3 and "to give several signatures, list them" in e.value.message
    if nvvm_missing() is None:
        failure = compile_check(source, "kernel.py", ["out", "a"], [("array", "float32", 1)] * 2)
        assert failure.line == 3 and "to give several signatures, list them" in failure.message


def test_an_unknown_type_in_a_signature_string_names_the_types_there_are():
    source = MAP_WITH_SIGNATURE.replace("void(float32[:], float32[:])", "void(float[:], float32[:])")
    with pytest.raises(LoadError) as e:
        load_module_for_sim(source, "kernel.py")
    assert e.value.line == 5
    assert "`float[:]` is not a type the simulator knows: use float32, float64, int32" in e.value.message


@needs_nvvm
def test_a_signature_whose_types_differ_from_the_launch_is_a_compile_error_with_the_fix():
    # one signature and a float32 array: a GPU would read the floats' bytes as int32s, unchecked
    source = MAP_WITH_SIGNATURE.replace("void(float32[:], float32[:])", "void(float32[:], int32[:])")
    failure = compile_check(source, "kernel.py", ["out", "a"], [("array", "float32", 1), ("array", "float32", 1)])
    assert failure.kind == "compile_error" and failure.line == 5
    assert failure.message == (
        "@cuda.jit signature (line 5): the signature `void(float32[:], int32[:])` of `kernel` declares `a` as "
        "`int32[:]`, but this puzzle passes a 1-d float32 array there: declare it as `float32[:]`, or leave the "
        "signature out (`@cuda.jit`) and Numba types each launch itself.")


def test_what_the_simulator_does_not_offer_is_refused_with_what_it_does():
    source = textwrap.dedent("""\
        from numba import cuda, njit

        @cuda.jit
        def kernel(out, a):
            out[0] = a[0]
        """)
    with pytest.raises(LoadError) as e:
        load_module_for_sim(source, "kernel.py")
    assert e.value.kind == "unsupported" and e.value.line == 1
    assert e.value.message.startswith("`numba.njit` is not available in a kernel file (line 1). What a kernel file "
                                      "can use from numba: `from numba import cuda`")
    assert "`from numba import cuda, float32, int32, void`" in e.value.message
    assert "`@cuda.jit('void(float32[:], int32)')`" in e.value.message
