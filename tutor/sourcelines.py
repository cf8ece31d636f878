"""Source compared line by line, as a reader sees it: whitespace collapsed, comments dropped.

Both the content check (an authored hint must not repeat the reference) and the AI hints' leak
guard (nor may a model's hint) ask the same question of code.
"""

from __future__ import annotations


def norm(line: str) -> str:
    return " ".join(line.split())


def code_lines(source: str) -> set[str]:
    out = set()
    for raw in source.splitlines():
        code = raw.split("#", 1)[0] if not raw.lstrip().startswith(("'", '"')) else raw
        code = norm(code)
        if code:
            out.add(code)
    return out
