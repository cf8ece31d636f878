"""The real Numba compiler catches what the simulator would accept and a GPU would reject."""

import pytest

from tutor.engine.judge import check_sim
from tutor.engine.loading.compile import nvvm_missing, trim_numba_error

pytestmark = pytest.mark.skipif(nvvm_missing() is not None, reason="NVVM is part of the default install; "
                                "this only skips on a machine installed without numba-cuda[cu13]")


def test_python_list_in_a_kernel_is_a_compile_error_with_its_line(catalog):
    source = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n"
              "    xs = [1, 2, 3]\n    out[i] = a[i] + 10 + xs[0] - 1\n")
    verdict = check_sim(catalog.get("map"), source, "k.py", seed=1).verdict
    assert not verdict.passed
    f = verdict.failures[0]
    assert f.kind == "compile_error" and f.line == 7 and "list" in f.message
    assert [x.kind for x in verdict.failures] == ["compile_error"]  # the simulator itself was happy


def test_undefined_name_points_at_its_line(catalog):
    source = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n"
              "    out[i] = a[i] + tenn\n")
    verdict = check_sim(catalog.get("map"), source, "k.py", seed=1).verdict
    f = verdict.failures[0]
    assert f.kind == "compile_error" and f.line == 7 and "tenn" in f.message


def test_device_helpers_compile_without_a_gpu(catalog):
    source = ("from numba import cuda\n\n\n@cuda.jit(device=True)\ndef plus_ten(x):\n    return x + 10\n\n\n"
              "@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = plus_ten(a[i])\n")
    verdict = check_sim(catalog.get("map"), source, "k.py", seed=1).verdict
    assert verdict.passed, verdict.failures


def test_trim_keeps_the_learner_line_and_drops_numba_noise():
    text = ("Failed in cuda mode pipeline (step: nopython frontend)\nNo implementation of function "
            "Function(<built-in function iadd>) found for signature:\n\nDuring: typing of intrinsic-call at "
            "k.py (9)\n\nFile \"k.py\", line 9:\n<source elided>\n    x += y\n    ^\n")
    line, message = trim_numba_error(text, "k.py")
    assert line == 9 and message.startswith("No implementation of function") and "During" not in message


# -- compile errors carry the kernel's line and Numba's first useful sentence, whole -----------------
from tutor.engine.loading.compile import compile_launches  # noqa: E402

FLOAT_ARRAYS = (("array", "float32", 1), ("array", "float32", 1))
LIMIT = 400  # what the optimiser keeps of a message: the engine's must fit whole


def _compile_failure(body: str, header: str = "from numba import cuda\n") -> dict:
    source = header + "\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n" + body
    failures = compile_launches(source, "candidate.py", [("kernel", FLOAT_ARRAYS)])
    assert len(failures) == 1, failures
    return failures[0], source.splitlines()


def _line_of(lines, text):
    return next(n for n, line in enumerate(lines, 1) if text in line)


def _whole(message: str) -> None:
    assert len(message) <= LIMIT, message
    assert message.rstrip().endswith((".", ")", "?")), message  # not cut mid-sentence


def test_an_unknown_attribute_of_cuda_names_its_line_and_the_attribute():
    f, lines = _compile_failure("    out[i] = a[i]\n    cuda.syncthread()\n    out[i] += 1\n")
    assert f["line"] == _line_of(lines, "syncthread()"), f
    assert "there is no `cuda.syncthread` in numba.cuda" in f["message"], f
    assert "`cuda.syncthreads`" in f["message"], f  # the near miss it probably meant
    _whole(f["message"])


def test_a_call_no_overload_accepts_names_its_line_and_the_signature_whole():
    f, lines = _compile_failure("    x = abs(a)\n    out[i] = a[i] + x[0]\n")
    assert f["line"] == _line_of(lines, "abs(a)"), f
    assert ("No implementation of function Function(<built-in function abs>) found for signature: "
            "abs(array(float32, 1d, C))") in f["message"], f
    assert "candidate implementations" not in f["message"] and "Of which" not in f["message"], f
    _whole(f["message"])


def test_a_type_error_deep_in_a_long_kernel_points_at_its_own_line():
    body = "".join(f"    out[i] = a[i] + {n}\n" for n in range(12)) + "    out[i] = a[i] + (1, 2)\n"
    f, lines = _compile_failure(body)
    assert f["line"] == _line_of(lines, "(1, 2)"), f
    assert "No implementation of function Function(<built-in function add>) found for signature: " \
           "add(float32, Tuple(Literal[int](1), Literal[int](2)))" in f["message"], f
    _whole(f["message"])


def test_an_untyped_global_names_its_line_and_type():
    f, lines = _compile_failure("    out[i] = a[i] + TABLE[1]\n", "from numba import cuda\nTABLE = {1: 2.0}\n")
    assert f["line"] == _line_of(lines, "TABLE[1]"), f
    assert "Untyped global name 'TABLE': Cannot determine Numba type of <class 'dict'>" in f["message"], f
    _whole(f["message"])


def test_a_global_list_says_so_instead_of_numbas_internal_object():
    f, lines = _compile_failure("    out[i] = a[i] * WEIGHTS[0]\n", "from numba import cuda\nWEIGHTS = [1.0, 2.0]\n")
    assert f["line"] == _line_of(lines, "WEIGHTS[0]"), f
    assert "`WEIGHTS`" in f["message"] and "list" in f["message"], f
    assert "OverloadSelector" not in f["message"] and "0x" not in f["message"], f
    _whole(f["message"])


def test_an_error_in_a_device_function_points_at_the_device_functions_line():
    source = ("from numba import cuda\n\n\n@cuda.jit(device=True)\ndef helper(x):\n    return abs(x, x)\n\n\n"
              "@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = helper(a[i])\n")
    failures = compile_launches(source, "candidate.py", [("kernel", FLOAT_ARRAYS)])
    assert [f["line"] for f in failures] == [6], failures
    _whole(failures[0]["message"])


def test_trim_shortens_a_long_message_at_a_sentence_not_mid_word():
    text = ("Failed in cuda mode pipeline (step: nopython frontend)\n"
            + " ".join(f"Sentence number {n} says something long about the kernel." for n in range(20)) + "\n")
    _, message = trim_numba_error(text, "k.py")
    assert message.startswith("Sentence number 0") and message.endswith("about the kernel."), message
    assert len(message) <= 300


def test_launch_types_carry_a_views_layout_and_a_tuples_items():
    """A column slice is not C-contiguous: Numba types it array(..., 'A'), and a kernel declared for
    C arrays has no match for it on a GPU (a helper's matmul, launched in column chunks only past
    2,048 columns, passed). A tuple (a shape passed whole) is a UniTuple of ints, not a float, which
    made an honest kernel fail to compile here."""
    import numpy as np

    from tutor.engine.sim.launch import launch_types

    a = np.zeros((4, 6), np.float32)
    assert launch_types([a, a[:, :3], a.T, a[1:3], a[:, 1]]) == (
        ("array", "float32", 2), ("array", "float32", 2, "A"), ("array", "float32", 2, "F"),
        ("array", "float32", 2), ("array", "float32", 1, "A"))
    assert launch_types([(4, 6), (1, 2.5)]) == (("tuple", (("int",), ("int",))), ("tuple", (("int",), ("float",))))

    declared = ("from numba import cuda\n\n\n@cuda.jit('void(float32[:, ::1])')\ndef kernel(out):\n"
                "    i, j = cuda.grid(2)\n    if i < out.shape[0] and j < out.shape[1]:\n        out[i, j] = 1.0\n")
    assert compile_launches(declared, "candidate.py", [("kernel", (("array", "float32", 2),))]) == []
    refused = compile_launches(declared, "candidate.py", [("kernel", (("array", "float32", 2, "A"),))])
    assert refused and refused[0]["kind"] == "compile_error" and "float32[:, :]" in refused[0]["message"]

    shaped = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, shape):\n    i = cuda.grid(1)\n"
              "    if i < shape[0]:\n        out[i] = shape[1]\n")
    assert compile_launches(shaped, "candidate.py", [("kernel", (("array", "float32", 1),
                                                                  ("tuple", (("int",), ("int",)))))]) == []
