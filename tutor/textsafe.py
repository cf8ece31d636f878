"""Text we did not write, made safe to show in a terminal.

A model's reply, an export file, a state file or a code file can hold characters that a terminal
obeys rather than shows: ESC starts sequences that set the window title (ESC ] 0 ; ... BEL), clear
the screen (ESC [ 2 J) or plant a link (OSC 8); the C1 controls 0x80-0x9f do the same in one byte on
some terminals; a carriage return or a backspace overwrites what was printed; U+202E and the other
bidi controls reorder a line so that it reads differently from what it holds. None of them belongs
in a hint, a learner's name or a puzzle id, so they are shown, never obeyed.

The readable form is Python's: the visible text `\\x1b` for ESC, `\\x07` for BEL, `\\x9b` for a C1 CSI,
`\\u202e` for a bidi override, `\\udc80` for a lone surrogate (which would also crash `print`).
Newline and tab are kept, and a CRLF line end becomes a newline. A backslash already in the text is
left as it is: the form is for reading, not for decoding back.

Each unsafe character is one code point and is replaced on its own, so text that arrives in pieces
(a streamed hint) can be made safe piece by piece with the same result as the whole (but for a CRLF
cut between two pieces, whose CR then shows as `\\x0d`: visible, and harmless).
"""

from __future__ import annotations

import re
import unicodedata

# C0 but tab and newline, DEL, C1, the bidi embeddings, overrides, isolates and marks, and lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_REPLACEMENT = "\ufffd"


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _picture(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: U+241B is ESC
    return "\u2421" if code == 0x7F else _REPLACEMENT


def terminal_safe(text: str) -> str:
    """`text` with every control character a terminal would obey shown escaped (`\\x1b`)."""
    return _UNSAFE.sub(_escaped, text.replace("\r\n", "\n"))


def terminal_safe_columns(text: str) -> str:
    """`text` with every unsafe character replaced by one visible character (U+241B for ESC, U+FFFD
    for the rest), so that column positions stay those of the text: for an editor, whose cursor and
    highlighting count characters of the learner's own text, which must not change."""
    return _UNSAFE.sub(_picture, text)


def visible(text: str) -> str:
    """`terminal_safe`, and every character that shows nothing, or breaks a line where the text does
    not, shown escaped too: the format characters (zero-width space and joiners, word joiner, byte-order
    mark, soft hyphen, the tag characters) and the line and paragraph separators (U+2028, U+2029),
    which Python does not count as line ends but a renderer may draw as one. For text whose every
    character a facilitator must see as it is: a learner's kernel, what their failing run kept."""
    return _NON_ASCII.sub(_escaped_if_hidden, terminal_safe(text))


def one_line(text: str) -> str:
    """`visible` text on one line, every run of whitespace (a newline, a tab, U+2028) one space: for a
    cell of a table or a row of a list, where a newline in someone else's text would start a row of
    its own that reads as ours."""
    return visible(" ".join(text.split()))


_NON_ASCII = re.compile("[^\x00-\x7f]")
_HIDDEN = {"Cf", "Zl", "Zp"}


def _escaped_if_hidden(match: re.Match) -> str:
    char = match.group()
    return f"\\u{ord(char):04x}" if unicodedata.category(char) in _HIDDEN else char


def has_unsafe(text: str) -> bool:
    """Whether `text` holds a character `terminal_safe` would escape: for fields that must be plain."""
    return _UNSAFE.search(text) is not None
