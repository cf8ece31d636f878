"""Durations as people write them: one reading and one writing for --budget, the settings file's
optimise_wall_time and every view's "time left", so a suggested budget can be pasted back as is.
Its own module because the settings (ai/) and the optimiser (coach/) both read durations, and the
coach builds on ai/, not the other way round.
"""

from __future__ import annotations

import re


def parse_duration(text: str) -> float:
    """'15m', '90s', '1h', '2.5' (minutes) -> seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if not m:
        raise ValueError(f"{text!r} is not a duration: write 15m, 90s or 1h")
    value, unit = float(m.group(1)), m.group(2) or "m"
    return value * {"s": 1, "m": 60, "h": 3600}[unit]


def duration_text(seconds: float) -> str:
    """Seconds written the way parse_duration (--budget, optimise_wall_time) reads them, so a
    suggestion can be pasted back."""
    seconds = max(1, round(seconds))
    for size, unit in ((3600, "h"), (60, "m")):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def clock_text(seconds: float) -> str:
    """A wall time in words: 45s, 2m 30s, 15m, 1h 00m."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s" if minutes and secs else f"{minutes}m" if minutes else f"{secs}s"
