"""Text from a model or a file is shown in the terminal, never obeyed by it."""

import random

import pytest

from tutor.textsafe import has_unsafe, one_line, terminal_safe, terminal_safe_columns, visible

TITLE = "\x1b]0;pwned\x07"                            # sets the window title
CLEAR = "\x1b[2J"                                     # clears the screen
LINK = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"  # an OSC 8 link
ATTACK = f"Ada{TITLE}{CLEAR}{LINK}\x9b31m\u202eevil\udc80\x7f\x08\r"


def test_every_control_a_terminal_obeys_is_shown_escaped():
    shown = terminal_safe(ATTACK)
    assert shown == ("Ada\\x1b]0;pwned\\x07\\x1b[2J\\x1b]8;;https://evil.example\\x1b\\click\\x1b]8;;\\x1b\\"
                     "\\x9b31m\\u202eevil\\udc80\\x7f\\x08\\x0d")
    assert not has_unsafe(shown)
    assert all(c.isprintable() for c in shown)


@pytest.mark.parametrize("text", ["plain words", "line one\nline two\n", "a\tb", "ünïcödé ✓ 核", "back\\slash"])
def test_ordinary_text_newlines_and_tabs_are_kept_as_they_are(text):
    assert terminal_safe(text) == text
    assert not has_unsafe(text)


def test_a_crlf_line_end_becomes_a_newline_and_a_lone_cr_is_shown():
    assert terminal_safe("one\r\ntwo\rthree") == "one\ntwo\\x0dthree"


def test_a_stream_made_safe_piece_by_piece_matches_the_whole_wherever_it_is_cut():
    rng = random.Random(7)
    text = ATTACK.replace("\r", "") * 3
    for _ in range(50):
        cuts = sorted(rng.sample(range(1, len(text)), 6))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        assert "".join(terminal_safe(p) for p in pieces) == terminal_safe(text)


def test_the_editor_form_keeps_one_visible_character_per_character():
    text = "x = '\x1b[2J\x07' \x9b \u202e \x7f\tend"
    drawn = terminal_safe_columns(text)
    assert len(drawn) == len(text)
    assert drawn == "x = '\u241b[2J\u2407' \ufffd \ufffd \u2421\tend"
    assert not has_unsafe(drawn)


def test_visible_shows_what_a_reader_could_not_see_and_keeps_the_lines_python_counts():
    hidden = "cache\u200b[i]\u200d = x\ufeff  # \u2028out[i] = 1\U000e0041\u00ad"
    assert visible(hidden) == "cache\\u200b[i]\\u200d = x\\ufeff  # \\u2028out[i] = 1\\ue0041\\u00ad"
    assert visible("def k(a):\n\tb = a  # ünïcödé ✓ 核\n") == "def k(a):\n\tb = a  # ünïcödé ✓ 核\n"
    assert visible(ATTACK) == terminal_safe(ATTACK)


def test_one_line_is_one_line_whatever_breaks_a_line():
    assert one_line(" race\n  on\t`cache`\u2028FORGED\u2029\x85\x0b\x0c\x1cx\r\n ") == "race on `cache` FORGED x"
    assert one_line("a\u200bb\x1b[2J") == "a\\u200bb\\x1b[2J"
