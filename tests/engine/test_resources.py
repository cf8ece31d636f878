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
    # a block's warps count in multiples of an SM's 4 partitions: 21 warps of 96 registers (64,512
    # by whole warps) count as 24, 73,728 registers, and a GPU refuses them (NVIDIA's occupancy header)
    assert block_registers(672, 96) == 24 * 3072 and out_of_registers("k", 96, 672, None)
    assert most_threads(65) == 896 and most_threads(96) == 640 and most_threads(32) == 1024


def test_the_refusal_says_what_the_gpu_says_why_and_what_to_change():
    message = out_of_registers("layernorm_rows", 96, 1024, None)
    assert message.startswith("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")
    assert "`layernorm_rows`" in message and "1024 threads" in message and "96 registers" in message
    assert "98,304" in message and "65,536" in message
    assert "at most 640 threads" in message and "max_registers=64" in message
    # the cap it advises fits, and so does the block size
    assert block_registers(1024, 64) <= 65536 and block_registers(640, 96) <= 65536
    # at 800 threads (25 warps, counted as 28) the cap must fit 28 warps: 72, not 80
    assert "max_registers=72" in out_of_registers("k", 96, 800, None) and block_registers(800, 72) <= 65536
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



SHARED_SUM = '''\
import numba
from numba import cuda

TPB = 256
SLOTS = 12000


@cuda.jit
def zero(out):
    if cuda.grid(1) == 0:
        out[0] = 0


@cuda.jit
def add_all(out, x, n):
    s = cuda.shared.array(SLOTS, numba.float32)
    extra = cuda.shared.array(0, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    s[t] = 0
    extra[t] = 0
    if i < n:
        s[t] = x[i]
    cuda.syncthreads()
    cuda.atomic.add(out, 0, s[t] + extra[t])


def launch(out, x):
    n = x.shape[0]
    zero[1, 1](out)
    add_all[(n + TPB - 1) // TPB, TPB, 0, 1024](out, x, n)
'''


def test_a_static_shared_array_past_48_kib_does_not_compile_as_on_a_gpu():
    # NVVM makes PTX of it, and the simulator ran it; ptxas (and so a GPU's driver) refuses it
    from tutor.coach.verify import verify

    fits = SHARED_SUM.replace("0, 1024](out", "0, 0](out").replace(" + extra[t]", "")
    fits = fits.replace("    extra = cuda.shared.array(0, numba.float32)\n", "").replace("    extra[t] = 0\n", "")
    assert "extra" not in fits
    assert verify("reduce_sum", fits).passed  # 48,000 bytes
    too_big = fits.replace("SLOTS = 12000", "SLOTS = 13000")
    result = verify("reduce_sum", too_big)
    assert {f.kind for f in result.failures} == {"compile_error"}
    message = result.failures[0].message
    assert "`add_all`" in message and "52,000 bytes of shared memory" in message and "49,152 (48 KiB)" in message
    assert result.failures[0].line == too_big.splitlines().index("def add_all(out, x, n):") + 1


def test_dynamic_shared_memory_past_what_the_static_arrays_leave_is_refused_at_launch():
    from tutor.coach.verify import verify

    assert verify("reduce_sum", SHARED_SUM).passed  # 48,000 + 1,024 bytes: 49,024 of 49,152
    result = verify("reduce_sum", SHARED_SUM.replace("0, 1024](out", "0, 2048](out"))
    assert {f.kind for f in result.failures} == {"runtime_error"}
    message = result.failures[0].message
    assert message.startswith("CUDA_ERROR_INVALID_VALUE") and "48,000 bytes" in message and "2,048" in message
    assert "at most 1,152" in message


EXPERT = (Path(__file__).parents[2] / "kernels" / "layernorm" / "expert.py").read_text()


@pytest.mark.parametrize("items, refused", [(20, True), (18, True), (15, False)])
def test_registers_are_counted_for_the_build_a_gpu_launches(items, refused):
    """Our layernorm expert keeping `items` row values a thread, in blocks of 1,024 threads on long
    rows. The line-information PTX the model reads gave ptxas 64, 54 and 70 registers a thread;
    numba-cuda's build for a launch (cc 9.0, link-time optimised, no line information) takes 80, 72
    and 56: the first two cannot launch 1,024 threads, the third can (a helper's attack found both
    errors: two kernels passed that a GPU refuses, one was refused that a GPU runs)."""
    from tutor.coach.verify import verify

    source = EXPERT.replace("ITEMS = 16 ", f"ITEMS = {items} ", 1)
    assert source != EXPERT
    result = verify("layernorm", source)
    if refused:
        assert {f.kind for f in result.failures} == {"runtime_error"}
        assert "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" in result.failures[0].message
    else:
        assert result.passed, [(f.kind, f.config, f.message) for f in result.failures]


def test_max_registers_that_is_not_a_number_does_not_compile_as_on_a_gpu():
    # numba-cuda hands True to the linker as it is, and ptxas stops: "Invalid value 'True'"
    from tutor.coach.verify import verify

    source = EXPERT.replace("@cuda.jit(fastmath=True)", "@cuda.jit(fastmath=True, max_registers=True)", 1)
    assert source != EXPERT
    result = verify("layernorm", source)
    assert {f.kind for f in result.failures} == {"compile_error"}
    assert "max_registers=True is not a number of registers" in result.failures[0].message
