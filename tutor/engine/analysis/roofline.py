"""The roofline of a device, with a kernel's place under it, drawn as plain text.

A kernel cannot run faster than its memory traffic allows (bytes over bandwidth) nor than its
arithmetic allows (FLOPs over the peak); which limit binds depends on its arithmetic intensity,
FLOPs per byte moved. On log-log axes the two limits are a slope and a flat roof meeting at the
ridge point: a kernel left of the ridge is memory-bound, right of it compute-bound. That one
picture tells a learner whether to fix the memory pattern or the arithmetic.

The trace sees memory, not arithmetic, so the FLOPs are the puzzle's word for its useful work
(`Puzzle.flops_for`); without them the roof is drawn and no point placed. The bytes are the
global sectors served (the L1's traffic, as counters.py counts it), all charged at the memory's
bandwidth: caches are not modelled, and the caption says so.

The picture is lines of plain text (no colour, no widgets), so the CLI prints it and the app shows
it alike, and a test reads it as it is.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

from .counters import Counters
from .device_model import Device, memory_bound

WIDTH = 60          # the picture's columns, at the most
MIN_WIDTH = 40      # below this the axes' labels no longer fit
PLOT_ROWS = 9       # the plot's rows, between the title and the x axis: 12 rows in all
LABEL = 6           # the y axis' labels ("100T") and the axis itself
X_DECADES = (-1, 3)  # FLOP/byte shown at the least: 0.1 to 1000 (the H200's ridge is at 15.6)
X_LIMITS = (-4, 6)   # a kernel's point further out sits on the edge, with an arrow

NO_FLOPS = "intensity unknown: this puzzle declares no FLOPs (the trace sees memory, not arithmetic)"
NO_CACHES = "caches are not modelled: the bytes are the L1's global sectors, all at memory's bandwidth"


@dataclass(frozen=True)
class Roofline:
    """One launch against one device: where its intensity puts it, and the time that bounds."""

    device: Device
    bytes_moved: int            # global sectors served, times 32
    flops: float | None         # the puzzle's declared useful FLOPs; None: not declared

    @property
    def ridge(self) -> float:
        """FLOP/byte where the slope meets the roof: the intensity a kernel needs to use the peak."""
        return self.device.fp32_flops / self.device.bandwidth

    @property
    def intensity(self) -> float | None:
        if self.flops is None or not self.bytes_moved:
            return None
        return self.flops / self.bytes_moved

    @property
    def memory_seconds(self) -> float:
        return self.bytes_moved / self.device.bandwidth

    @property
    def compute_seconds(self) -> float | None:
        return None if self.flops is None else self.flops / self.device.fp32_flops

    @property
    def seconds(self) -> float:
        """The roofline's bound on the launch's time: max(bytes / bandwidth, FLOPs / peak)."""
        return max(self.memory_seconds, self.compute_seconds or 0.0)

    @property
    def bound(self) -> str | None:
        """"memory" or "compute": the limit that binds, where the FLOPs are known."""
        if self.flops is None or not (self.bytes_moved or self.flops):
            return None
        return "compute" if (self.compute_seconds or 0.0) > self.memory_seconds else "memory"

    @property
    def attainable(self) -> float | None:
        """FLOP/s at the kernel's intensity: the roofline's height above its point."""
        i = self.intensity
        return None if i is None else min(self.device.fp32_flops, i * self.device.bandwidth)

    def to_json(self) -> dict:
        return {"device": self.device.name, "peak_flops": self.device.fp32_flops,
                "bandwidth": self.device.bandwidth, "ridge": round(self.ridge, 3),
                "bytes": self.bytes_moved, "flops": self.flops,
                "intensity": None if self.intensity is None else round(self.intensity, 4),
                "attainable_flops": self.attainable, "bound": self.bound,
                "memory_seconds": self.memory_seconds, "compute_seconds": self.compute_seconds,
                "seconds": self.seconds, "caches_modelled": False}

    # -- the picture --------------------------------------------------------------------------
    def picture(self, width: int = WIDTH) -> list[str]:
        """The log-log plot: attainable FLOP/s over intensity, the ridge's column dotted, the
        kernel's point as a dot on the roofline (its ceiling: the simulator cannot time it)."""
        width = max(MIN_WIDTH, min(WIDTH, width))
        cols = width - LABEL
        dev = self.device
        x_lo, x_hi = self._x_range()
        slope = math.log10(dev.bandwidth)
        y_hi = roof = math.log10(dev.fp32_flops)  # the roof is the top row
        y_lo = math.floor(slope + x_lo)

        def column(log_x: float) -> int:
            return round((log_x - x_lo) / (x_hi - x_lo) * (cols - 1))

        def position(log_x: float) -> float:  # the roofline's row at log_x, from the top, fractional
            return (y_hi - min(roof, log_x + slope)) / (y_hi - y_lo) * (PLOT_ROWS - 1)

        def log_x_of(c: int) -> float:
            return x_lo + c * (x_hi - x_lo) / (cols - 1)

        ridge_col = column(math.log10(self.ridge))
        grid = [[" "] * cols for _ in range(PLOT_ROWS)]
        for c in range(cols):
            pos = position(log_x_of(c))
            r = min(PLOT_ROWS - 1, round(pos))
            if c > ridge_col:
                grid[r][c] = "─"
            else:  # the slope: a character low, middle or high in its cell, so it climbs smoothly
                d = pos - r
                grid[r][c] = "¯" if d < -1 / 6 else "_" if d > 1 / 6 else "-"
        for r in range(1, PLOT_ROWS):
            if grid[r][ridge_col] == " ":
                grid[r][ridge_col] = "┊"
        point = self._point_column(column, x_lo, x_hi)
        if point is not None:
            c, glyph = point
            grid[min(PLOT_ROWS - 1, round(position(log_x_of(c))))][c] = glyph

        labels = {0: _si(dev.fp32_flops).replace(" ", "")}
        for k in range(y_lo, math.floor(roof) + 1):
            r = round((y_hi - k) / (y_hi - y_lo) * (PLOT_ROWS - 1))
            if 0 < r < PLOT_ROWS and r - 1 not in labels:
                labels[r] = _si(10.0 ** k).replace(" ", "")
        title = f"{dev.name} roofline: FLOP/s over FLOP/byte, log-log"
        out = [title if len(title) <= width else f"{dev.name}: FLOP/s over FLOP/byte"[:width]]
        for r in range(PLOT_ROWS):
            label = labels.get(r)
            out.append((f"{label:>{LABEL - 1}}┤" if label else " " * (LABEL - 1) + "│") + "".join(grid[r]))
        ticks = {column(k): k for k in range(x_lo, x_hi + 1)}
        step = 1 if cols / (x_hi - x_lo) >= 7 else 2
        out.append(" " * (LABEL - 1) + "└" + "".join("┬" if c in ticks else "─" for c in range(cols)))
        names = [" "] * (cols + LABEL)
        for c, k in ticks.items():
            if (k - x_lo) % step:
                continue
            text = _decade(k)
            start = max(0, min(LABEL + c - len(text) // 2, len(names) - len(text)))
            if all(ch == " " for ch in names[max(0, start - 1):start + len(text) + 1]):
                names[start:start + len(text)] = text
        out.append("".join(names).rstrip())
        return out

    def caption(self, width: int = WIDTH) -> list[str]:
        """What the picture shows, in words: the roof, the slope, the point, the bound, what is
        not modelled."""
        dev = self.device
        parts = [f"─ roof {_si(dev.fp32_flops)}FLOP/s fp32 (NVIDIA's datasheet), slope "
                 f"{dev.bandwidth / 1e12:.1f} TB/s (a copy measured on ours), ┊ ridge {self.ridge:.3g} FLOP/byte."]
        i = self.intensity
        if self.flops is None:
            parts.append(NO_FLOPS + ".")
            parts.append(f"Memory-bound time: at least {_time(self.memory_seconds)} ({self.bytes_moved:,} bytes).")
        else:
            if not self.bytes_moved:
                parts.append(f"No global memory traffic: {_num(self.flops)} FLOPs and no intensity to place.")
            elif i == 0:
                parts.append(f"◀ this kernel: 0 FLOP/byte (no FLOPs for {self.bytes_moved:,} bytes): all memory.")
            else:
                side = "memory-bound" if i < self.ridge else "compute-bound"
                parts.append(f"● this kernel: {_num(i)} FLOP/byte ({_num(self.flops)} FLOPs / {self.bytes_moved:,} "
                             f"bytes), {side}: at most {_si(self.attainable)}FLOP/s.")
            parts.append(f"Bound: at least {_time(self.seconds)} (memory {_time(self.memory_seconds)}, "
                         f"compute {_time(self.compute_seconds or 0.0)}).")
        parts.append(NO_CACHES[0].upper() + NO_CACHES[1:] + ".")
        width = max(MIN_WIDTH, min(WIDTH, width))
        return [line for part in parts for line in textwrap.wrap(part, width)]

    def line(self) -> str:
        """The roofline in one line, for a table of configs."""
        i = self.intensity
        if i is None:
            why = "no FLOPs declared" if self.flops is None else "no global traffic"
            return f"roofline: intensity unknown ({why}), memory's bound at least {_time(self.memory_seconds)}"
        return (f"roofline: {_num(i)} FLOP/byte (the ridge is at {self.ridge:.3g}), {self.bound}-bound: at least "
                f"{_time(self.seconds)}")

    def text(self, width: int = WIDTH) -> str:
        return "\n".join(self.picture(width) + self.caption(width))

    def _x_range(self) -> tuple[int, int]:
        lo, hi = X_DECADES
        i = self.intensity
        if i:
            lo = max(X_LIMITS[0], min(lo, math.floor(math.log10(i))))
            hi = min(X_LIMITS[1], max(hi, math.ceil(math.log10(i))))
        return lo, hi

    def _point_column(self, column, x_lo: int, x_hi: int) -> tuple[int, str] | None:
        i = self.intensity
        if i is None:
            return None
        if i == 0 or math.log10(i) < x_lo:
            return column(x_lo), "◀"
        if math.log10(i) > x_hi:
            return column(x_hi), "▶"
        return column(math.log10(i)), "●"


def roofline(counters: Counters, device: Device, flops: float | None) -> Roofline:
    """The roofline of one traced launch: its global sectors' bytes and the puzzle's FLOPs."""
    return Roofline(device, memory_bound(counters, device).bytes_moved, flops)


def _si(value: float) -> str:
    """67e12 -> "67 T", 1e11 -> "100 G": FLOP/s as the axis and the caption say them."""
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}"
    return f"{value:.3g} "


def _num(value: float) -> str:
    """3 significant figures, without an exponent under a million: 2.1, 0.125, 1,000."""
    return f"{value:,.0f}" if value >= 1000 else f"{value:.3g}"


def _decade(k: int) -> str:
    """10**k as an axis label: 0.01, 0.1, 1, 10, 100, 1000, then 1e4."""
    if -3 <= k <= 3:
        return f"{10.0 ** k:g}" if k < 0 else str(10 ** k)
    return f"1e{k}"


def _time(seconds: float) -> str:
    if seconds < 1e-6:
        return f"{seconds * 1e9:.3g} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} us"
    return f"{seconds * 1e3:.3g} ms"
