"""How long a learner has really been at a puzzle, and whether they are at it now.

A facilitator ranks puzzles by the time learners spend on them, so that time must be time spent:
a puzzle passed through for three seconds on the way to another, or left open over lunch, is no
hold-up. The clock on a puzzle therefore runs only while the app is open and the learner is doing
something in it:

- An *event* is anything the learner does in the app on a puzzle: opening it, a key press or a
  click, an edit, a run, a hint.
- The time between two consecutive events on the same puzzle counts in full when it is at most
  IDLE_GAP_S (five minutes: reading a lesson, thinking over a verdict), and not at all when it is
  longer (they were away, the laptop slept). So an event's own span is the gap up to the next event,
  counted only when that gap is short; the last event before a long pause counts nothing.
- A span on a puzzle ends when the learner opens another puzzle or the app closes: the gap up to
  that moment counts for the puzzle left behind, under the same five-minute rule. A puzzle opened
  and left after 3 s has 3 s.

`counted_gap` is the rule; tutor.store keeps the running sum per puzzle (in memory, written with
the state on a coarse cadence and when the app closes), along with when the app last closed.

A learner is *on a puzzle now* ("still on it" in the class report) when it is unsolved, it is the
puzzle they opened last, they did something on it within the last STILL_ON_IT_S (fifteen minutes,
three idle gaps: long enough to read a lesson through, short enough that someone who left the room
drops off the list within a quarter hour), and their app has not closed since (a served learner's
browser tab closing quits their app, which writes that mark). An app killed without closing leaves
no mark; it drops off after the fifteen minutes.

Records written before gpu-tutor kept this have no activity (`active_s` is None): their time is
unknown, never guessed from the wall clock, and whether they are on it now falls back to "unsolved
and the puzzle opened last", all such a record can tell.
"""

from __future__ import annotations

IDLE_GAP_S = 5 * 60.0       # a longer pause between events counts as away
STILL_ON_IT_S = 15 * 60.0   # "still on it": an event on the puzzle within this long
WRITE_EVERY_S = 15.0        # activity is written with the state at most this often (and on close)


def counted_gap(last: float, now: float) -> float:
    """The seconds between two events on one puzzle that count as time at it: all of a gap of at
    most IDLE_GAP_S, none of a longer one (nor of a clock that stepped back)."""
    gap = now - last
    return gap if 0.0 <= gap <= IDLE_GAP_S else 0.0


def on_it_now(*, solved: bool, current: bool, last_active: float | None, has_activity: bool,
              closed_at: float | None, at: float) -> bool:
    """Whether a learner is on a puzzle at time `at` (see the module's rule). `has_activity`: the
    record was written by a gpu-tutor that keeps activity; `last_active`: its last event on the
    puzzle; `closed_at`: when the learner's app last closed, None when never."""
    if solved or not current:
        return False
    if not has_activity:
        return True  # an older record: unsolved and open last is all it can say
    if last_active is None or at - last_active > STILL_ON_IT_S:
        return False
    return closed_at is None or closed_at < last_active
