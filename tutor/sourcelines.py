"""Source compared line by line, as a reader sees it: whitespace collapsed, comments dropped.

The content check asks it of authored hints: a hint must not repeat a line of the reference. (The
AI hints' leak guard judges closeness after renaming instead, in ai/leakguard.py.)
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


def unified_diff(before: str, after: str, before_name: str, after_name: str) -> str:
    """A unified diff, one line per line whatever the files end with: difflib's own, fed lines with
    their endings, ran a last line without one into the next line of the diff."""
    import difflib

    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), before_name, after_name, lineterm="")
    return "".join(line + "\n" for line in lines)
