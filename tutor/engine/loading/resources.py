"""The registers a kernel's threads need, which the simulator does not have and a GPU runs out of.

A launch whose block needs more registers than an SM holds never starts on a GPU: the driver
answers CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES. The simulator runs Python, with no register file, so a
layernorm candidate that kept 16 row values, gamma and beta in registers (94 a thread) for blocks of
1,024 threads passed every simulator shape and then failed to launch on an H100. ptxas decides the
count: Numba's PTX (compile.py, already made for the compile check) goes through nvJitLink, whose
ptxas reports each kernel's registers, as it would for the GPU we judge against (sm_90, an
H100/H200; every GPU since Volta holds 65,536 registers an SM and a block). Where nvJitLink is
missing, no count is known and nothing is refused.
"""

from __future__ import annotations

import re

ARCH = "sm_90"
REGISTERS_PER_SM = 65536   # also the most one block may use
REGISTER_UNIT = 256        # registers are given to a warp in units of this many
_REPORT = re.compile(r"Function properties for '([^']+)'.*?used (\d+) registers.*?(\d+) stack, (\d+) bytes smem",
                     re.S)
_COUNTS: dict = {}  # (ptx, max_registers) -> (registers, stack bytes, static shared bytes), or None


def ptxas_report(ptx: str, max_registers: int | None = None) -> tuple[int, int, int] | None:
    """(registers a thread, stack bytes a thread, static shared bytes) of the PTX's one kernel, as
    ptxas builds it for ARCH, capped at `max_registers` as the decorator asks; None when nvJitLink
    is missing here or ptxas printed no report."""
    key = (ptx, max_registers)
    if key not in _COUNTS:
        if len(_COUNTS) >= 256:  # a warm child sees a new source at every run of watch mode
            _COUNTS.clear()
        _COUNTS[key] = _ptxas(ptx, max_registers)
    return _COUNTS[key]


def _ptxas(ptx: str, max_registers: int | None):
    try:
        from cuda.bindings import nvjitlink
    except ImportError:
        return None
    options = [f"-arch={ARCH}", "-verbose"] + ([f"-maxrregcount={max_registers}"] if max_registers else [])
    try:
        handle = nvjitlink.create(len(options), options)
    except Exception:  # noqa: BLE001 (no usable nvJitLink library: no count, no refusal)
        return None
    try:
        data = ptx.encode()
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
        nvjitlink.complete(handle)
        log = bytearray(nvjitlink.get_info_log_size(handle))
        nvjitlink.get_info_log(handle, log)
    except Exception:  # noqa: BLE001 (ptxas refused what NVVM made: the compile check speaks for it)
        return None
    finally:
        nvjitlink.destroy(handle)
    found = _REPORT.search(log.decode(errors="replace"))
    if not found:
        return None
    return int(found.group(2)), int(found.group(3)), int(found.group(4))


def block_registers(threads: int, registers: int) -> int:
    """Registers one block takes from its SM: whole warps, each given whole units of REGISTER_UNIT."""
    warps = -(-threads // 32)
    return warps * (-(-registers * 32 // REGISTER_UNIT) * REGISTER_UNIT)


def most_threads(registers: int) -> int:
    """The largest whole-warp block whose registers fit."""
    per_warp = -(-registers * 32 // REGISTER_UNIT) * REGISTER_UNIT
    return min(1024, REGISTERS_PER_SM // per_warp * 32)


def out_of_registers(kernel: str, registers: int, threads: int, capped: int | None) -> str | None:
    """What the GPU would answer to launching `kernel` with blocks of `threads`, when their
    registers do not fit an SM; None when they do."""
    need = block_registers(threads, registers)
    if need <= REGISTERS_PER_SM:
        return None
    fewer = most_threads(registers)
    cap = (REGISTERS_PER_SM // (-(-threads // 32) * 32)) // 8 * 8  # max_registers that would let it fit
    return (f"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: a GPU refuses to launch `{kernel}` with blocks of {threads} "
            f"threads. ptxas gives it {registers} registers a thread (for an H100, {ARCH}"
            + (f", capped at max_registers={capped}" if capped else "")
            + f"), so a block needs {need:,} registers and an SM holds {REGISTERS_PER_SM:,}. "
            f"Launch blocks of at most {fewer} threads, or keep fewer values in registers "
            f"(smaller local arrays, fewer live variables), or cap them with "
            f"@cuda.jit(max_registers={cap}) at the price of spills to local memory.")
