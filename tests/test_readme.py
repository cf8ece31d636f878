"""README is a user's page: what it says about the catalog stays true as puzzles are added.

Its `list` comment said "14 classic puzzles and 9 advanced ones" while `gpu-tutor list` showed 30
in three tracks; a count written in prose is checked against the catalog here."""

import re
from pathlib import Path

from tutor.puzzles import load_catalog

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
NUMBERS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                      "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}


def _number(word: str) -> int:
    return int(word) if word.isdigit() else NUMBERS[word.lower()]


def test_the_list_commands_comment_names_no_count_that_can_go_stale():
    (line,) = [line for line in README.splitlines() if line.strip().startswith("gpu-tutor list ")]
    comment = line.split("#", 1)[1]
    assert not re.search(r"\d", comment), line


def test_every_count_of_a_tracks_puzzles_in_readme_is_the_catalogs():
    catalog = load_catalog()
    sizes = {t.id: len(t.puzzles) for t in catalog.tracks}
    words = "|".join(NUMBERS)
    claims = re.findall(rf"\b(\d+|{words}) ({'|'.join(sizes)}) puzzles\b", README, re.I)
    claims += [(n, t) for t, n in re.findall(rf"\*\*The ({'|'.join(sizes)}) track\*\* \((\d+|{words}) puzzles", README,
                                             re.I)]
    assert claims, "README counts no track's puzzles: this test has nothing to check"
    for count, track in claims:
        assert _number(count) == sizes[track.lower()], (count, track)
