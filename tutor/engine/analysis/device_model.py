"""What a named GPU would make of a traced launch: occupancy from the launch's shape and shared
memory, and the memory roofline's lower bound on its time.

Figures are the device's limits (CUDA's occupancy rules for compute capability 9.0) and, for the
H200, the device-to-device copy bandwidth measured on ours (../shared/device/README.md: 4.3 TB/s)
and the fp32 peak of NVIDIA's H200 datasheet (SXM: 67 TFLOP/s, 132 SMs x 128 lanes x 2 flops of a
fused multiply-add x 1.98 GHz; roofline.py draws the two as a roofline).
Registers are not known on the simulator (Numba allocates them
when it compiles for the card), so occupancy here is an upper bound, and said so. The trace holds
memory accesses, not arithmetic, so the bound is memory's: bytes over bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass

from .counters import SECTOR, WARP, Counters, itemsize
from ..trace import GLOBAL, SHARED, Trace


@dataclass(frozen=True)
class Device:
    name: str
    sms: int
    max_blocks_per_sm: int
    max_warps_per_sm: int       # 64 warps: 2048 threads
    shared_per_sm: int          # bytes
    shared_per_block: int       # bytes, the most one block may have
    bandwidth: float            # bytes per second, measured copy
    fp32_flops: float = 0.0     # FLOP/s, the datasheet's fp32 peak (CUDA cores, not tensor cores)


DEVICES = {
    "h200": Device("NVIDIA H200", sms=132, max_blocks_per_sm=32, max_warps_per_sm=64,
                   shared_per_sm=228 * 1024, shared_per_block=227 * 1024, bandwidth=4.3e12, fp32_flops=67e12),
}


@dataclass
class Occupancy:
    threads_per_block: int
    shared_per_block: int
    blocks_per_sm: int
    limited_by: str
    occupancy: float            # active warps over the SM's maximum, an upper bound
    waves: float                # blocks over what all SMs hold at once

    def text(self, device: Device) -> str:
        return (f"occupancy at most {self.occupancy:.0%} on the {device.name} ({self.blocks_per_sm} block(s) of "
                f"{self.threads_per_block} threads per SM, limited by {self.limited_by}; registers are unknown "
                f"on the simulator), {self.waves:.3g} wave(s) of blocks")


def shared_bytes_per_block(trace: Trace) -> int:
    first = next((a.block for a in trace.arrays if a.space == SHARED), None)
    return sum(a.size * itemsize(a.dtype) for a in trace.arrays if a.space == SHARED and a.block == first)


def occupancy(trace: Trace, device: Device) -> Occupancy:
    tpb = trace.threads_per_block
    warps = -(-tpb // WARP)
    shared = shared_bytes_per_block(trace)
    limits = {"blocks per SM": device.max_blocks_per_sm,
              "threads per SM": device.max_warps_per_sm // warps if warps else device.max_blocks_per_sm}
    if shared:
        limits["shared memory"] = device.shared_per_sm // shared if shared <= device.shared_per_block else 0
    limited_by = min(limits, key=limits.get)
    blocks = limits[limited_by]
    resident = blocks * device.sms
    return Occupancy(tpb, shared, blocks, limited_by, min(1.0, blocks * warps / device.max_warps_per_sm),
                     trace.n_blocks / resident if resident else float("inf"))


@dataclass
class Bound:
    bytes_moved: int            # global sectors served, times 32
    ideal_bytes: int            # the bytes asked for, contiguous
    seconds: float              # the memory roofline's lower bound

    def text(self, device: Device) -> str:
        time = f"{self.seconds * 1e9:.3g} ns" if self.seconds < 1e-6 else f"{self.seconds * 1e6:.3g} us"
        return (f"{self.bytes_moved:,} bytes through global memory ({self.ideal_bytes:,} asked for): at "
                f"{device.bandwidth / 1e12:.1f} TB/s no less than {time} (arithmetic is not traced: this is "
                "memory's bound)")


def memory_bound(counters: Counters, device: Device) -> Bound:
    lines = [c for c in counters.lines if c.space == GLOBAL]
    moved = sum(c.sectors for c in lines) * SECTOR
    ideal = sum(c.ideal_sectors for c in lines) * SECTOR
    return Bound(moved, ideal, moved / device.bandwidth)
