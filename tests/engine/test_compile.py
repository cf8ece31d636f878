"""The real Numba compiler catches what the simulator would accept and a GPU would reject."""

import pytest

from tutor.engine.check import check_sim
from tutor.engine.compile import nvvm_missing, trim_numba_error

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
