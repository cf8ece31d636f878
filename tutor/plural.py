"""A count's noun in the number the count needs: "1 request", "2 requests", "1 bank conflict".

Counters print small numbers often (one warp's one request in a four-element puzzle), and "1
requests, 1 sectors" reads as a mistake, which a learner then wonders about; "request(s)" reads
as a form. Every place that prints a counted noun asks here.
"""

from __future__ import annotations


def plural(count, noun: str, many: str | None = None) -> str:
    """`noun` for a count of exactly one, else `many` (by default the noun with an s)."""
    return noun if count == 1 else (many or f"{noun}s")


def counted(count, noun: str, many: str | None = None) -> str:
    """`1 request`, `32 requests`."""
    return f"{count} {plural(count, noun, many)}"
