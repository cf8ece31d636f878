"""Source line by line: as Python numbers its lines (a verdict's line is one of these), and as a
reader compares them, whitespace collapsed and comments dropped.

The content check asks the second of authored hints: a hint must not repeat a line of the reference.
(The AI hints' leak guard judges closeness after renaming instead, in ai/leakguard.py.)
"""

from __future__ import annotations

import re


def python_lines(source: str) -> list[str]:
    """The lines of `source` as Python numbers them, so that a verdict's line N is item N - 1: split
    at \\n, \\r\\n and a lone \\r only. str.splitlines also splits at a form feed, U+2028 or U+0085 in
    a comment or a string, and every line after it would be one further down than Python's."""
    return _LINE_END.split(source)


_LINE_END = re.compile(r"\r\n|\r|\n")


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
