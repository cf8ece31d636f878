"""The leak suite (tests/ai/leak_suite.py): every give-away withheld by reading it, no honest hint
withheld, with the real checker in the engine's child behind the guard.

Judged by today's main (the guard before the closeness check), 64 of the 126 give-aways reached
the learner: every indented block, `~~~` fence, `<pre><code>`, `>>>` session, comment, string,
list of right-hand sides, set of plain prose lines and blockquoted fence, and the transpose typed
with a typo and its own names; and 52 of the 214 honest hints were withheld: every guard, barrier,
skeleton, single solution line and quoted unguarded line of the learner's, most `else:` and loop
headers. `python bench/leakguard.py --against HEAD` prints both columns.

Part 4 of "Scores and hints that mean what they say" adds the normalisation suite: each puzzle's
reference with one trivial change a learner undoes in a keystroke (or all at once), judged against
the starter, the reference without its barriers and the reference without its last statement,
withheld by reading or by running the normalised code; and hand-written fragment hints, shown.
"""

import pytest
from leak_suite import (DISGUISES, HONEST_FORMS, LEAK_FORMS, PUZZLES, disguise_cases, fragment_cases,
                        honest_cases, leak_cases)

from tutor.ai.hints import SimChecker
from tutor.ai.leakguard import LeakGuard
from tutor.engine.runner import Runner
from tutor.puzzles import load_catalog

CATALOG = load_catalog()
LEAKS = leak_cases(CATALOG)
HONEST = honest_cases(CATALOG)
# The disguises of part 4 on puzzles of every shape (one line, a guard, shared memory, a reduction,
# a tiled transpose, two stores that read alike, a histogram's atomics, a grid-stride loop); the
# bench judges every puzzle (bench/leakguard.py).
DISGUISED = disguise_cases(CATALOG, ("map", "guard", "shared", "dot", "prefix_sum", "transpose", "scan_blelloch",
                                     "histogram", "perf_copy"))
FRAGMENTS = fragment_cases(CATALOG)


@pytest.fixture(scope="module")
def runner():
    with Runner("sim") as r:
        yield r


def guard_for(case, runner):
    puzzle = CATALOG.get(case.puzzle)
    return LeakGuard(puzzle.reference, puzzle.starter, case.learner, SimChecker(case.puzzle, runner=runner))


def test_the_suite_has_every_form_of_the_issue_on_several_puzzles_and_more_honest_hints_than_leaks():
    issue = {"4-space indented block", "~~~ fence", "4 fences, a name renamed", "one-letter typo", "<pre><code>",
             ">>> prompts", "in comments", "in a docstring", "in a string", "fullwidth \uff0b", "zero-width spaces",
             "5 shuffled fences"}
    assert issue <= set(LEAK_FORMS)
    assert "every right-hand side (fragments)" in HONEST_FORMS  # fragments are shown (part 4 of the issue)
    assert len(PUZZLES) >= 5 and len(HONEST) >= len(LEAKS)


@pytest.mark.parametrize("case", LEAKS, ids=lambda c: f"{c.puzzle}: {c.form}")
def test_every_give_away_is_withheld_by_reading_it_before_any_code_runs(case, runner):
    guard = guard_for(case, runner)
    leak = guard.judge(case.text)
    assert leak is not None, "leaked"
    assert guard.checks_run == 0  # closeness alone: the disguise does not matter


@pytest.mark.parametrize("case", HONEST, ids=lambda c: f"{c.puzzle}: {c.form}")
def test_no_honest_hint_is_withheld(case, runner):
    leak = guard_for(case, runner).judge(case.text)
    assert leak is None, leak.reasons


def test_every_disguise_is_generated_for_every_learner_file_of_the_puzzles_judged():
    assert len(DISGUISES) >= 6 and {c.state for c in DISGUISED} == {"the starter", "all but the barriers",
                                                                    "all but the last statement"}
    assert len({c.puzzle for c in FRAGMENTS}) >= 20 and len(FRAGMENTS) >= 2 * len({c.puzzle for c in FRAGMENTS})


@pytest.mark.parametrize("case", DISGUISED, ids=lambda c: f"{c.puzzle}: {c.form} ({c.state})")
def test_every_disguise_a_learner_undoes_in_a_keystroke_is_withheld(case, runner):
    assert guard_for(case, runner).judge(case.text) is not None, "leaked"


@pytest.mark.parametrize("case", FRAGMENTS, ids=lambda c: f"{c.puzzle}: {c.text[:50]}")
def test_no_hint_that_names_fragments_and_no_statement_is_withheld(case, runner):
    leak = guard_for(case, runner).judge(case.text)
    assert leak is None, leak.reasons
