"""Launches a GPU refuses for registers, refused on the simulator too (resources.py).

The case that fooled the judge: tests/coach/past_gpu/layernorm_params_early.py passed every
simulator shape and then failed to launch on an H100 with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES. From
the honest side: our own layernorm expert takes 64 registers a thread at 1,024 threads, exactly an
SM's 65,536, and must still pass; so must the refused kernel once capped as the message advises."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.engine.loading.resources import block_registers, most_threads, out_of_registers, ptxas_report

PARAMS_EARLY = (Path(__file__).parents[1] / "coach" / "past_gpu" / "layernorm_params_early.py").read_text()


def test_a_block_fits_up_to_the_sm_register_file_counted_in_whole_warp_units():
    assert block_registers(1024, 64) == 65536  # 64 x 32 = 2,048 a warp, 32 warps
    assert block_registers(1000, 64) == 65536  # a partial warp takes a whole warp's registers
    assert block_registers(1024, 65) == 32 * 2304  # 65 x 32 = 2,080, rounded up to units of 256
    assert out_of_registers("k", 64, 1024, None) is None
    assert out_of_registers("k", 255, 256, None) is None  # 255 x 32 -> 8,192 a warp, 8 warps
    assert most_threads(65) == 896 and most_threads(96) == 672 and most_threads(32) == 1024


def test_the_refusal_says_what_the_gpu_says_why_and_what_to_change():
    message = out_of_registers("layernorm_rows", 96, 1024, None)
    assert message.startswith("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")
    assert "`layernorm_rows`" in message and "1024 threads" in message and "96 registers" in message
    assert "98,304" in message and "65,536" in message
    assert "at most 672 threads" in message and "max_registers=64" in message
    # the cap it advises fits, and so does the block size
    assert block_registers(1024, 64) <= 65536 and block_registers(672, 96) <= 65536
    assert "capped at max_registers=128" in out_of_registers("k", 128, 1024, 128)


def test_ptxas_counts_a_kernels_registers_and_honours_max_registers():
    from numba import cuda, float32

    def heavy(out, x):
        acc = cuda.local.array(48, float32)
        i = cuda.grid(1)
        for j in range(48):
            acc[j] = x[i + j] * (j + 1)
        s = float32(0)
        for j in range(48):
            for k in range(48):
                s += acc[j] * acc[k]
        out[i] = s

    ptx, _ = cuda.compile_ptx(heavy, (float32[::1], float32[::1]), cc=(8, 0))
    free = ptxas_report(ptx)
    capped = ptxas_report(ptx, 32)
    assert free is not None and capped is not None
    assert free[0] > 32 and capped[0] <= 32
    assert capped[1] >= free[1]  # what no longer fits registers spills to the stack


def test_a_layernorm_that_holds_too_many_registers_for_1024_threads_fails_on_the_simulator():
    from tutor.coach.tasks import load_task
    from tutor.coach.verify import verify

    result = verify("layernorm", PARAMS_EARLY)
    assert not result.passed
    assert {f.kind for f in result.failures} == {"runtime_error"}
    (failure,) = result.failures
    assert failure.message.startswith("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")
    assert "`layernorm_block_per_row`" in failure.message and "blocks of 1024 threads" in failure.message
    assert failure.line == PARAMS_EARLY.splitlines().index("def layernorm_block_per_row(out, x, gamma, beta, cols):") + 1
    # the fixed shapes launch at most 256 threads a block, which fit: only a long row is refused
    fixed = {str(tuple(s)) for s in load_task("layernorm").shapes("sim")}
    assert all(c.passed for c in result.configs if c.name.removeprefix("shape ") in fixed)
    assert failure.config not in {f"shape {s}" for s in fixed}


@pytest.mark.parametrize("change", [
    ("@cuda.jit(fastmath=True)", "@cuda.jit(fastmath=True, max_registers=64)"),  # the message's cap
    ("MAX_TPB = 1024", "MAX_TPB = 512"),                                          # fewer threads
])
def test_the_same_kernel_passes_once_it_fits_as_the_message_advises(change):
    from tutor.coach.verify import verify

    source = PARAMS_EARLY.replace(*change)
    assert source != PARAMS_EARLY
    result = verify("layernorm", source)
    assert result.passed, [(f.kind, f.config, f.message) for f in result.failures]


def test_the_layernorm_expert_at_exactly_an_sms_registers_passes():
    from tutor.coach.tasks import load_task
    from tutor.coach.verify import verify

    result = verify("layernorm", load_task("layernorm").source("expert"))
    assert result.passed, [(f.kind, f.config, f.message) for f in result.failures]

