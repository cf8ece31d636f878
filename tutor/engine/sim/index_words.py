"""What to say when a kernel indexes something that is not an array, or an array the wrong way.

Numba says `No implementation of function Function(<built-in function getitem>) found for
signature: getitem(int32, Tuple(int64, Literal[int](0)))` and the simulator's Python says `'int'
object is not subscriptable`; a learner needs "`j[i, 0]` indexes `j`, which is an integer, not an
array". The real compiler's check (loading/compile.py) and the simulator (launch.py) both word it
here, from the line's text and what each knows of the value: Numba's type, or the thread's local.
"""

from __future__ import annotations

import re

_NUMBA_INDEXING = re.compile(r"No implementation of function Function\(<built-in function (getitem|setitem)>\) "
                             r"found for signature:\s*(?:>>> )?(getitem|setitem)\((.*)\)\.?$")
_NUMBA_ARRAY = re.compile(r"^array\((\w+), (\d+)d, \w+\)$")
_NUMBA_SCALAR = re.compile(r"^(?:Literal\[(\w+)\]\(.*\)|(u?int)\d+|(float)\d+|(bool)(?:ean)?|(complex)\d+)$")
_WORDS = {"int": "an integer", "uint": "an integer", "float": "a floating-point number", "bool": "a boolean",
          "complex": "a complex number"}
_SUBSCRIPT = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\[")


def numba_indexing(message: str, line_text: str, arrays: set[str] = frozenset()) -> str | None:
    """Numba's `getitem`/`setitem` with no implementation, in words; None when it is not that or
    the types are not ones these words cover (Numba's own words stay then). `arrays`: names the
    file makes arrays (parameters, cuda.shared.array...), which tell apart subscripts of a line."""
    match = _NUMBA_INDEXING.match(message.strip())
    if not match:
        return None
    args = split_arguments(match.group(3))
    if len(args) < 2:
        return None
    value, index = args[0], args[1]
    indexes = split_arguments(index[len("Tuple("):-1]) if index.startswith(("Tuple(", "UniTuple(")) else [index]
    if index.startswith("UniTuple("):  # UniTuple(int64 x 2)
        kind, _, times = index[len("UniTuple("):-1].rpartition(" x ")
        indexes = [kind] * int(times) if times.isdigit() else indexes
    scalar = _NUMBA_SCALAR.match(value)
    if scalar:
        kind = next(g for g in scalar.groups() if g)
        return not_an_array(line_text, _WORDS.get(kind, "a number"), len(indexes), not_names=arrays)
    array = _NUMBA_ARRAY.match(value)
    if not array:
        return None
    ndim = int(array.group(2))
    if len(indexes) != ndim:
        name, expr = _pick(line_text, len(indexes))
        given = f"{len(indexes)} index{'es' if len(indexes) != 1 else ''}"
        wanted = f"{ndim} index{'es' if ndim != 1 else ''}"
        if name is None:
            return (f"An array on this line is given {given}, but it is a {ndim}-d array: give it {wanted}, "
                    "one per dimension.")
        return f"`{expr}` gives `{name}` {given}, but `{name}` is a {ndim}-d array: give it {wanted}, one per dimension."
    floats = [t for t in indexes if t.startswith("float")]
    if floats:
        name, expr = _pick(line_text, len(indexes), floaty=True)
        shown = f"`{expr}` indexes" if name else "An index on this line is"
        return (f"{shown} with a floating-point number ({floats[0]}): an index must be an integer. Compute it "
                "from integers (`//` divides them), or wrap it in int(...).")
    return None


def not_an_array(line_text: str, what: str, count: int | None = None, names=None, not_names=frozenset()) -> str:
    """`j[i, 0]` indexes `j`, which is <what>, not an array. `names`: the names on the line known to
    hold such a value (the simulator knows the thread's locals); `not_names`: names that are arrays."""
    name, expr = _pick(line_text, count, names, not_names)
    if name is None:
        return (f"This line indexes {what} as if it were an array: only arrays can be indexed. Look for the name "
                "on this line that holds a number, and index the array you meant instead.")
    return (f"`{expr}` indexes `{name}`, which is {what}, not an array: only arrays can be indexed. Index the array "
            f"you meant, or use `{name}` without brackets.")


def split_arguments(text: str) -> list[str]:
    """`int32, Tuple(int64, float32)` -> ['int32', 'Tuple(int64, float32)']: commas at the top level."""
    parts, depth, start = [], 0, 0
    for n, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:n].strip())
            start = n + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


_FLOATY = re.compile(r"\d\.|\.\d|(?<!/)/(?!/)|float|math\.")


def _pick(line_text: str, count: int | None, names=None, not_names=frozenset(),
          floaty: bool = False) -> tuple[str | None, str | None]:
    """(name, `name[...]` as written) of the one subscript on the line that fits: its name among
    `names` when given, its number of indexes `count` when known, and, of several, the one not in
    `not_names`; `floaty`: one whose index reads as a float. (None, None) when not one fits."""
    found = []
    code = line_text.split("#", 1)[0]
    for match in _SUBSCRIPT.finditer(code):
        inner = _bracketed(code, match.end() - 1)
        if inner is None:
            continue
        name = match.group(1)
        if names is not None and name not in names:
            continue
        if count is not None and len(split_arguments(inner)) != count:
            continue
        if floaty and not _FLOATY.search(inner):  # the one whose index can be a float
            continue
        found.append((name, f"{name}[{inner.strip()}]"))
    if len({n for n, _ in found}) > 1:
        found = [f for f in found if f[0] not in not_names]
    return found[0] if len({n for n, _ in found}) == 1 else (None, None)


def _bracketed(text: str, opening: int) -> str | None:
    """What stands between the `[` at `opening` and its `]`, or None when the line does not close it."""
    depth = 0
    for n in range(opening, len(text)):
        if text[n] in "([{":
            depth += 1
        elif text[n] in ")]}":
            depth -= 1
            if depth == 0:
                return text[opening + 1:n]
    return None
