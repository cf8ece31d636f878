"""The registers a kernel's threads need, which the simulator does not have and a GPU runs out of.

A launch whose block needs more registers than an SM holds never starts on a GPU: the driver
answers CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES. The simulator runs Python, with no register file, so a
layernorm candidate that kept 16 row values, gamma and beta in registers (94 a thread) for blocks of
1,024 threads passed every simulator shape and then failed to launch on an H100. ptxas decides the
count: the PTX numba-cuda builds for a launch (compile.py's _launched_build: the model's
line-information PTX counts differently, 64 registers where the launch takes 80) goes through
nvJitLink, whose ptxas reports each kernel's registers, as for the GPU we judge against (sm_90, an
H100/H200; every GPU since Volta holds 65,536 registers an SM and a block). Where nvJitLink is
missing, no count is known and nothing is refused.

ptxas also refuses outright what NVVM lets through, a static shared array past 48 KiB: that is a
compile error here as it is on a GPU (compile.py asks ptxas_refusal for every launched kernel).
"""

from __future__ import annotations

import re

ARCH = "sm_90"
REGISTERS_PER_SM = 65536   # also the most one block may use
REGISTER_UNIT = 256        # registers are given to a warp in units of this many
PARTITIONS = 4             # an SM's warp schedulers: a block's warps are counted in multiples of this
_REPORT = re.compile(r"Function properties for '([^']+)'.*?used (\d+) registers.*?(\d+) stack, (\d+) bytes smem",
                     re.S)
_COUNTS: dict = {}  # (ptx, max_registers) -> (registers, stack bytes, static shared bytes), a refusal, or None
_SHARED_DATA = re.compile(r"uses too much shared data \((0x[0-9a-f]+) bytes, (0x[0-9a-f]+) max\)")
STATIC_SHARED_MAX = 48 * 1024  # bytes of shared memory a block may have without opting in to more
# ptxas's "bytes smem" for sm_90 counts, beside the kernel's own arrays, the 1 KiB the driver keeps
# for itself in a block that uses shared memory at all (a 1-float array reports 1,028, one of 0
# floats, dynamic only, 1,024); the 48 KiB limit is on the kernel's own bytes
RESERVED_SHARED = 1024


class Refused(str):
    """ptxas's refusal of a kernel, in a learner's words (a str)."""


def ptxas_report(ptx: str, max_registers: int | None = None) -> tuple[int, int, int] | None:
    """(registers a thread, stack bytes a thread, static shared bytes) of the PTX's one kernel, as
    ptxas builds it for ARCH, capped at `max_registers` as the decorator asks; None when nvJitLink
    is missing here, or ptxas refused the kernel (ptxas_refusal says why) or printed no report."""
    found = _ptxas_cached(ptx, max_registers)
    return None if isinstance(found, Refused) else found


def ptxas_refusal(ptx: str, max_registers: int | None = None) -> str | None:
    """Why ptxas, the assembler a GPU's driver runs on Numba's PTX, refuses this kernel; None when
    it accepts it or cannot run here. NVVM accepts what ptxas then refuses: a static shared array of
    more than 48 KiB compiles to PTX and never loads on a GPU."""
    found = _ptxas_cached(ptx, max_registers)
    return found if isinstance(found, Refused) else None


def _ptxas_cached(ptx: str, max_registers: int | None):
    key = (ptx, type(max_registers).__name__, max_registers)  # True == 1, but ptxas refuses True
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
    if max_registers is True or (max_registers and not str(max_registers).isdigit()):
        # numba-cuda hands the decorator's value to the linker as it is: ptxas stops at `True`
        return Refused(f"ptxas, which turns the compiled kernel into the GPU's machine code, refuses it: "
                       f"max_registers={max_registers!r} is not a number of registers (\"Invalid value for "
                       f"option 'maxrregcount'\"). Write a whole number, e.g. @cuda.jit(max_registers=64).")
    options = [f"-arch={ARCH}", "-verbose"] + ([f"-maxrregcount={max_registers}"] if max_registers else [])
    try:
        handle = nvjitlink.create(len(options), options)
    except Exception:  # noqa: BLE001 (no usable nvJitLink library: no count, no refusal)
        return None
    try:
        data = ptx.encode()
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
        try:
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError:
            log = bytearray(nvjitlink.get_error_log_size(handle))
            nvjitlink.get_error_log(handle, log)
            return _refusal(log.decode(errors="replace"))
        log = bytearray(nvjitlink.get_info_log_size(handle))
        nvjitlink.get_info_log(handle, log)
    except Exception:  # noqa: BLE001 (nvJitLink itself failed: no count, no refusal)
        return None
    finally:
        nvjitlink.destroy(handle)
    found = _REPORT.search(log.decode(errors="replace"))
    if not found:
        return None
    return int(found.group(2)), int(found.group(3)), int(found.group(4))


def _refusal(log: str) -> Refused | None:
    """ptxas's error, without its mangled names and hexadecimal: what the kernel asked for too much of."""
    shared = _SHARED_DATA.search(log)
    if shared:
        used, most = int(shared.group(1), 16), int(shared.group(2), 16)
        return Refused(f"ptxas, which turns the compiled kernel into the GPU's machine code, refuses it: its "
                       f"cuda.shared.array declarations take {used:,} bytes of shared memory, and a block may have "
                       f"at most {most:,} ({most // 1024} KiB). Make the shared arrays smaller (a tile, not a "
                       f"whole row), or keep part of the data in registers or global memory.")
    lines = [line.split(":", 1)[-1].strip() for line in log.splitlines()
             if line.lstrip().startswith(("error", "ptxas fatal"))]
    if not lines:
        return None  # not a refusal of the kernel (nvJitLink failed in itself): the compile check stands
    text = re.sub(r"'_Z\w+'", "the kernel", "; ".join(lines))
    return Refused(f"ptxas, which turns the compiled kernel into the GPU's machine code, refuses it: {text}")


def own_shared(reported: int) -> int:
    """The kernel's own static shared bytes, from ptxas's count with the driver's reserve."""
    return reported - RESERVED_SHARED if reported >= RESERVED_SHARED else reported


def too_much_shared(kernel: str, static: int, dynamic: int) -> str | None:
    """What the GPU answers to a launch whose dynamic shared memory, beside the kernel's static
    arrays, passes what a block may have; None when it fits."""
    if static + dynamic <= STATIC_SHARED_MAX or dynamic <= 0:
        return None
    return (f"CUDA_ERROR_INVALID_VALUE: a GPU refuses to launch `{kernel}`: its cuda.shared.array declarations take "
            f"{static:,} bytes, and the launch asks for {dynamic:,} bytes of dynamic shared memory more; a block "
            f"may have {STATIC_SHARED_MAX:,} (48 KiB) in all. Ask for at most {STATIC_SHARED_MAX - static:,} "
            f"bytes in kernel[blocks, threads, 0, shared_bytes], or make the static arrays smaller.")


def _warps(threads: int) -> int:
    """Warps a block's registers are counted for: whole warps, rounded up to a multiple of the SM's
    4 partitions (NVIDIA's occupancy calculator: the hardware checks a launch against the per-block
    register limit this way; 21 warps of 96 registers count as 24 and do not fit)."""
    return -(-(-(-threads // 32)) // PARTITIONS) * PARTITIONS


def warp_registers(registers: int) -> int:
    """Registers one warp is given: its 32 threads' count, in whole units of REGISTER_UNIT."""
    return -(-registers * 32 // REGISTER_UNIT) * REGISTER_UNIT


def block_registers(threads: int, registers: int) -> int:
    """Registers one block takes from its SM: warps (_warps), each given warp_registers."""
    return _warps(threads) * warp_registers(registers)


def most_threads(registers: int) -> int:
    """The largest block whose registers fit: whole warps, a multiple of 4 of them."""
    return min(1024, REGISTERS_PER_SM // warp_registers(registers) // PARTITIONS * PARTITIONS * 32)


def out_of_registers(kernel: str, registers: int, threads: int, capped: int | None) -> str | None:
    """What the GPU would answer to launching `kernel` with blocks of `threads`, when their
    registers do not fit an SM; None when they do."""
    need = block_registers(threads, registers)
    if need <= REGISTERS_PER_SM:
        return None
    fewer = most_threads(registers)
    cap = (REGISTERS_PER_SM // (_warps(threads) * 32)) // 8 * 8  # max_registers that would let it fit
    return (f"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: a GPU refuses to launch `{kernel}` with blocks of {threads} "
            f"threads. ptxas gives it {registers} registers a thread (for an H100, {ARCH}"
            + (f", capped at max_registers={capped}" if capped else "")
            + f"), so a block needs {need:,} registers and an SM holds {REGISTERS_PER_SM:,}. "
            f"Launch blocks of at most {fewer} threads, or keep fewer values in registers "
            f"(smaller local arrays, fewer live variables), or cap them with "
            f"@cuda.jit(max_registers={cap}) at the price of spills to local memory.")
