"""The room's misconceptions: one mistake is one group however a learner spells it, two mistakes are two.

The mistakes are the beginners' of tests/content/test_wrong_solutions.py, judged for real by our
simulator (check_sim, no compiler) and kept as the app keeps them (failure_summary). Each has a second
spelling, the way another learner writes the same kernel: other names for the index or the loop
variable, cuda.threadIdx.x inline instead of a local, spaces, parentheses, a comment, `b * a` for
`a * b`, `total = total + x` for `total += x`. The two must land in one group; a puzzle's different
mistakes must not.
"""

from __future__ import annotations

import functools
import re
import sys

import pytest

from tests.content.test_wrong_solutions import WRONG
from tutor.textsafe import has_unsafe
from tutor.workshop.misconceptions import MAX_TEXT, clusters, failure_summary, gist, line_shape

# "dot-no_barrier" -> (puzzle, kind, source, seed). The compile errors among them (a Python list) come
# from the real compiler, which these checks leave out (compile=False): the simulator passes them.
MISTAKES = {p.id: p.values for p in WRONG if p.values[1] != "compile_error"}


@functools.lru_cache(maxsize=None)
def _catalog():
    from tutor.puzzles import load_catalog

    return load_catalog()


@functools.lru_cache(maxsize=None)
def summary(pid: str, source: str, seed: int = 1) -> dict | None:
    """What the app keeps of a run of `source`: the real verdict's first failure, summarised."""
    from tutor.engine.judge import check_sim

    v = check_sim(_catalog().get(pid), source, seed=seed, compile=False, keep_traces=False).verdict
    return None if v.passed else failure_summary(v.failures, source)


def respell(source: str, *changes: tuple[str, str]) -> str:
    """`source` with each (old, new) made: a name is renamed as a whole word, other text replaced
    as it is. Each change must find something, so a spelling cannot silently be the same text."""
    for old, new in changes:
        if old.isidentifier():
            source, n = re.subn(rf"\b{old}\b", new, source)
        else:
            n = source.count(old)
            source = source.replace(old, new)
        assert n, f"{old!r} is not in the source"
    return source


def _extra() -> dict[str, tuple]:
    """Two more kinds a beginner meets before any of the above: a line the parser refuses, a name
    that does not exist when the kernel runs."""
    guard = MISTAKES["guard-off_by_one_guard"][2]
    map_ = MISTAKES["map-adds_one_not_ten"][2]
    no_colon = respell(guard, ("if local_i <= size:", "if local_i < size"))
    no_import = respell(map_, ("a[local_i] + 1", "math.sqrt(a[local_i] * a[local_i]) + 10"))
    return {"guard-if_without_a_colon": ("guard", "compile_error", no_colon, 1),
            "map-math_without_its_import": ("map", "runtime_error", no_import, 1)}


MISTAKES.update(_extra())


# Another learner's spelling of each mistake. Every failure kind the beginners' mistakes cover is here.
SECOND = [
    ("map-adds_one_not_ten", [("    local_i = cuda.threadIdx.x\n", ""),
                              ("out[local_i] = a[local_i] + 1",
                               "out[cuda.threadIdx.x] = (a[cuda.threadIdx.x] + 1)  # one more")]),
    ("map-adds_one_not_ten", [("a[local_i] + 1", "1 + a[local_i]")]),
    ("map-reads_right_neighbour", [("local_i", "tid"), ("a[tid + 1] + 10", "a[tid+1]+10")]),
    ("map-negative_index", [("local_i", "x"), ("# <- BUG", "# the one before")]),
    ("guard-if_without_a_colon", [("local_i", "t"), ("if t < size", "if t<size  # guard")]),
    ("map-math_without_its_import", [("local_i", "x"), ("a[x] * a[x]", "a[x]*a[x]")]),
    ("zip-reads_a_twice", [("local_i", "k")]),
    ("guard-no_guard", [("local_i", "idx"), ("# <- BUG", "# TODO guard")]),
    ("guard-off_by_one_guard", [("local_i", "t"), ("if t <= size:", "if (t <= size):")]),
    ("guard-reads_before_the_guard", [("value", "x"), ("local_i", "j")]),
    ("map2d-guards_only_the_row", [("i", "row"), ("j", "col")]),
    ("map2d-swapped_indices_transpose", [("i", "row"), ("j", "col")]),
    ("broadcast-no_guard", [("i", "x"), ("j", "y"), ("a[x, 0] + b[0, y]", "b[0, y] + a[x, 0]")]),
    ("broadcast-same_index_for_both", [("i", "r"), ("j", "c")]),
    ("blocks-thread_index_only", [("i", "tx")]),
    ("blocks-no_guard_in_last_block", [("cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "cuda.grid(1)"),
                                       ("i", "g")]),
    ("blocks2d-reads_the_transposed_cell", [("i", "r"), ("j", "c")]),
    ("shared-barrier_inside_the_guard", [("local_i", "tx"), ("# <- BUG", "# wait for everyone")]),
    ("shared-reads_a_again_instead_of_shared", [("local_i", "li"), ("i", "gi")]),
    ("shared-global_index_into_shared", [("i", "g")]),
    ("pooling-no_barrier", [("local_i", "lid"), ("total", "acc")]),
    ("pooling-window_one_too_short", [("total", "s")]),
    ("pooling-neighbours_from_global_memory", [("total", "s"), ("i", "gi")]),
    ("dot-no_barrier", [("local_i", "t"), ("k", "j")]),
    ("dot-no_barrier", [("a[i] * b[i]", "b[i] * a[i]"), ("total += cache[k]", "total = total + cache[k]")]),
    ("dot-every_thread_adds_into_out0", [("i", "gid"), ("a[gid] * b[gid]", "(a[gid] * b[gid])")]),
    ("dot-no_zero_fill", [("k", "n"), ("total", "acc")]),
    ("dot-accumulates_in_out", [("k", "step")]),
    ("dot-barrier_inside_the_guard", [("local_i", "tid")]),
    ("conv1d-no_halo", [("j", "k"), ("local_i", "t")]),
    ("conv1d-no_barrier", [("j", "k"), ("total", "acc")]),
    ("prefix_sum-barrier_inside_the_if", [("stride", "s")]),
    ("prefix_sum-no_barrier_between_steps", [("stride", "s"), ("local_i", "t")]),
    ("prefix_sum-every_block_writes_out0", [("local_i", "lane")]),
    ("prefix_sum-no_zero_fill", [("stride", "half")]),
    ("prefix_sum-stops_one_step_early", [("stride", "step")]),
    ("axis_sum-row_from_block_x", [("row", "r"), ("col", "c")]),
    ("axis_sum-no_column_guard", [("col", "tx")]),
    ("axis_sum-barrier_inside_the_load_guard", [("col", "x")]),
    ("matmul-no_second_barrier", [("local_i", "ti"), ("local_j", "tj"), ("k", "kk")]),
    ("matmul-straight_from_global_memory", [("k", "m")]),
]


def test_the_second_spellings_cover_every_failure_kind_of_the_beginners_mistakes():
    covered = {summary(*MISTAKES[name][::2])["kind"] for name, _ in SECOND}
    assert covered == {summary(pid, source, seed)["kind"] for pid, _, source, seed in MISTAKES.values()}
    assert {"race", "out_of_bounds", "wrong_output", "uninitialized_read", "barrier_divergence", "budget_exceeded",
            "compile_error", "runtime_error"} <= covered


@pytest.mark.parametrize("name,changes", [pytest.param(n, c, id=f"{n}-{k}") for k, (n, c) in enumerate(SECOND)])
def test_one_mistake_spelled_two_ways_is_one_group(name, changes):
    pid, kind, source, seed = MISTAKES[name]
    other = respell(source, *changes)
    first, second = summary(pid, source, seed), summary(pid, other, seed)
    assert first is not None and second is not None
    assert first["kind"] == second["kind"]
    groups = clusters([("ada", pid, first), ("grace", pid, second)])
    assert [(m.puzzle, m.kind, m.learners) for m in groups] == [(pid, first["kind"], ["ada", "grace"])], \
        (first, second)


# Mistakes of one puzzle that are one misconception to a facilitator, and stay one group. A thread
# index that leaves out the block's offset (`threadIdx.x` alone, or `blockIdx.x + threadIdx.x`)
# makes blocks write each other's cells on the same line: the lesson is the same (`cuda.grid(1)`),
# and the line that races cannot tell the two apart.
SAME_LESSON = [{"blocks-thread_index_only", "blocks-adds_block_number_instead_of_multiplying"}]


@pytest.mark.parametrize("pid", sorted({v[0] for v in MISTAKES.values()}))
def test_the_different_mistakes_of_a_puzzle_are_different_groups(pid):
    names = [n for n, v in MISTAKES.items() if v[0] == pid]
    learners = [(name, pid, summary(pid, MISTAKES[name][2], MISTAKES[name][3])) for name in names]
    groups = clusters(learners)
    expected = [[n] for n in names if not any(n in same for same in SAME_LESSON)]
    expected += [sorted(same) for same in SAME_LESSON if same <= set(names)]
    assert sorted(sorted(m.learners) for m in groups) == sorted(expected), [(m.learners, m.what()) for m in groups]


def test_dots_three_mistakes_read_apart():
    """The issue's example: no barrier, every thread adding into out[0], no zero fill."""
    said = {}
    for name in ("dot-no_barrier", "dot-every_thread_adds_into_out0", "dot-no_zero_fill"):
        pid, _, source, seed = MISTAKES[name]
        [m] = clusters([(name, pid, summary(pid, source, seed))])
        said[name] = m.what()
    assert said["dot-no_barrier"].startswith("race on `cache` between `cache[…] = ")
    assert said["dot-no_barrier"].endswith("and `_ += cache[…]`")
    assert said["dot-every_thread_adds_into_out0"].startswith("race on `out`")
    assert said["dot-no_zero_fill"].startswith("uninitialized read on `cache`")
    assert len(set(said.values())) == 3


def test_a_room_of_mistakes_in_two_spellings_counts_each_group_right():
    plan = {"dot-no_barrier": 5, "dot-every_thread_adds_into_out0": 3, "guard-no_guard": 4, "map-adds_one_not_ten": 2,
            "shared-barrier_inside_the_guard": 1}
    spelled = {n: c for n, c in SECOND}
    latest, n = [], 0
    for name, count in plan.items():
        pid, _, source, seed = MISTAKES[name]
        for k in range(count):
            n += 1
            text = respell(source, *spelled[name]) if k % 2 else source
            latest.append((f"learner-{n:02d}", pid, summary(pid, text, seed)))
    groups = clusters(latest)
    assert [len(m.learners) for m in groups] == [5, 4, 3, 2, 1]
    assert [m.puzzle for m in groups] == ["dot", "guard", "dot", "map", "shared"]
    assert groups[0].describe(of=15).startswith("dot: 5 of 15 learners, race on `cache`")


# -- both directions: what splits one mistake, what merges two --------------------------------------


@pytest.mark.parametrize("name", ["dot-no_barrier", "pooling-no_barrier", "prefix_sum-no_barrier_between_steps",
                                  "blocks-thread_index_only", "guard-no_guard", "map-adds_one_not_ten",
                                  "conv1d-no_halo"])
def test_a_learners_fresh_seed_does_not_split_their_mistake(name):
    """The app draws fresh random sizes for every run: the same kernel checked with other seeds is
    the same mistake (a race reported at another of its writes, a wrong answer at other cells)."""
    pid, _, source, _ = MISTAKES[name]
    latest = [(f"seed-{seed}", pid, summary(pid, source, seed)) for seed in (1, 2, 3, 4, 5)]
    groups = clusters(latest)
    assert len(groups) == 1, [(m.learners, m.what()) for m in groups]


def test_a_race_seen_from_its_write_or_from_its_read_is_one_group():
    """The detector names a race by its write (line) and the other access (other_line): the same
    race kept once as (write, read) and once the other way round is one mistake."""
    pid, _, source, seed = MISTAKES["dot-no_barrier"]
    s = summary(pid, source, seed)
    assert s["shape"] != s["other_shape"]
    turned = {**s, "shape": s["other_shape"], "other_shape": s["shape"]}
    assert len(clusters([("ada", pid, s), ("grace", pid, turned)])) == 1


def test_an_out_of_bounds_line_is_told_apart_by_the_if_around_it():
    """`out[i] = a[i] + 10` is the failing line of no guard, of a guard with `<=`, of a guard on the
    row only and of `or` for `and`: four mistakes, and the `if` around the line says which."""
    said = {}
    for name in ("guard-no_guard", "guard-off_by_one_guard", "map2d-guards_only_the_row", "map2d-or_instead_of_and"):
        pid, _, source, seed = MISTAKES[name]
        [m] = clusters([(name, pid, summary(pid, source, seed))])
        said[name] = m.what()
    assert said == {
        "guard-no_guard": "out of bounds on `a` at `out[…] = a[…] + 10`, with no `if` around it",
        "guard-off_by_one_guard": "out of bounds on `a` at `out[…] = a[…] + 10` under `if _ <= _:`",
        "map2d-guards_only_the_row": "out of bounds on `a` at `out[…] = a[…] + 10` under `if _ < _:`",
        "map2d-or_instead_of_and": "out of bounds on `a` at `out[…] = a[…] + 10` under `if _ < _ or _ < _:`",
    }


def test_an_early_return_guards_like_an_if_and_either_way_round_of_a_comparison_is_one():
    pid, _, source, seed = MISTAKES["guard-off_by_one_guard"]
    returns = respell(source, ("    if local_i <= size:\n        out",
                               "    if local_i > size:\n        return\n    out"))
    flipped = respell(source, ("if local_i <= size:", "if size >= local_i:"))
    groups = clusters([("ada", pid, summary(pid, source, seed)), ("bo", pid, summary(pid, returns, seed)),
                       ("cy", pid, summary(pid, flipped, seed))])
    assert [m.learners for m in groups] == [["ada", "bo", "cy"]], [m.what() for m in groups]


def test_reading_the_right_neighbour_and_the_left_one_are_two_mistakes():
    """Both fail at `out[i] = a[…] + 10`: the constant the index adds is what differs."""
    said = [m.what() for n in ("map-reads_right_neighbour", "map-negative_index")
            for m in clusters([(n, "map", summary("map", MISTAKES[n][2], 1))])]
    assert said == ["out of bounds on `a` at `out[…] = a[_ + 1] + 10`, with no `if` around it",
                    "out of bounds on `a` at `out[…] = a[_ - 1] + 10`, with no `if` around it"]


def test_two_wrong_answers_stored_by_one_line_are_one_group():
    """Decided: a wrong answer is named by the line that stored it, and prefix_sum's last line
    (`out[…] = cache[…]`) stores every wrong sum, whatever made it wrong: stopping a step early and
    loading `a[local_i]` (every block summing the first block's numbers) are one group there. The
    line that made the sum wrong is not in the verdict; the facilitator opens the group to read
    the kernels."""
    pid, _, early, seed = MISTAKES["prefix_sum-stops_one_step_early"]
    first_block = respell(early, ("while stride > 1:", "while stride > 0:"), ("= a[i]", "= a[local_i]"))
    first, second = summary(pid, early, seed), summary(pid, first_block, seed)
    assert first["kind"] == second["kind"] == "wrong_output"
    assert len(clusters([("ada", pid, first), ("bo", pid, second)])) == 1


def test_two_wrong_answers_at_different_cells_and_values_are_one_group_when_written_on_one_line():
    first = {"kind": "wrong_output", "rule": None, "array": "out", "line": 7, "shape": "out[…] = a[…] + 1",
             "other_shape": None, "gist": gist("out[3] is 4 but should be 13; thread 3 of block 0 wrote it on line 7.")}
    second = {**first, "line": 9, "gist": gist("out[0, 1] is -2.5 but should be 1e-05; thread (0, 1) wrote it.")}
    assert len(clusters([("ada", "map", first), ("grace", "map", second)])) == 1


def test_cells_no_thread_wrote_read_alike_whatever_their_starting_value():
    """A wrong answer with no line of its own is told by its gist: numbers dropped, and `nan` and
    `inf` are numbers too."""
    gists = {gist(f"out[{i}] is {v} but should be 3.0; no thread wrote it (it still holds its starting value).")
             for i, v in ((0, "0.0"), (5, "nan"), (2, "-inf"), (7, "1.5e+20"))}
    assert len(gists) == 1, gists


def test_wrong_answers_with_no_line_but_different_messages_stay_apart():
    shape = {"kind": "wrong_output", "rule": None, "array": "out", "line": None, "shape": None, "other_shape": None}
    unwritten = {**shape, "gist": gist("out[2] is 0 but should be 3; no thread wrote it.")}
    wrong_shape = {**shape, "gist": gist("out has shape (4,) but the answer has shape (4, 1).")}
    assert len(clusters([("ada", "map", unwritten), ("grace", "map", wrong_shape)])) == 2


def test_two_mistakes_whose_lines_share_a_shape_but_not_a_kind_or_array_stay_apart():
    """`cache[…] = 0` is the shape of every zero fill: a race on it and an out-of-bounds write of it
    are two mistakes, and so are the same race on two arrays."""
    race = {"kind": "race", "rule": None, "array": "cache", "line": 9, "shape": "cache[…] = 0",
            "other_shape": "_ += cache[…]", "gist": "x"}
    oob = {**race, "kind": "out_of_bounds", "other_shape": None}
    other_array = {**race, "array": "tile"}
    assert len(clusters([("a", "dot", race), ("b", "dot", oob), ("c", "dot", other_array)])) == 3


# -- what the summaries and groups hold --------------------------------------------------------------


def test_every_summary_of_the_beginners_mistakes_is_short_and_a_record_the_store_accepts():
    from tutor.store import PuzzleProgress

    for name, (pid, _, source, seed) in MISTAKES.items():
        s = summary(pid, source, seed)
        assert s is not None, name
        assert all(len(v) <= MAX_TEXT for v in s.values() if isinstance(v, str)), (name, s)
        PuzzleProgress.from_json({"last_failure": s})  # raises ValueError for a summary it would refuse


def test_a_summary_someone_edited_into_escapes_is_shown_escaped():
    evil = {"kind": "race\x1b]0;pwned\x07", "rule": "\x1b[2J", "array": "cache\u202e", "line": 3,
            "shape": "cache[…] = \x9b31m", "other_shape": None, "gist": "\r\x08gone"}
    [m] = clusters([("ada", "dot", evil)])
    assert not has_unsafe(m.what()) and not has_unsafe(m.describe(of=2))
    assert "\\x1b" in m.what()


def test_failures_of_a_passing_run_and_of_a_kind_not_a_string_are_left_out():
    assert failure_summary([], "x = 1\n") is None
    assert clusters([("ada", "dot", None), ("grace", "dot", {"kind": 3}), ("lin", "dot", "race")]) == []


# -- line_shape on text nobody checked ---------------------------------------------------------------


def test_line_shape_keeps_what_a_line_does_and_drops_how_it_names_things():
    assert line_shape("    out[local_i] = a[local_i] + 10  # <- BUG") == "out[…] = a[…] + 10"
    assert line_shape("out[tid] = a[tid+1]+10") == line_shape("out[i] = a[1 + i] + 10") == "out[…] = a[_ + 1] + 10"
    assert line_shape("out[i, j] = a[i, j]") == line_shape("out[x, y] = a[y, x]") == "out[…] = a[…]"
    assert line_shape("out[0] += a[i] * b[i]") == "out[0] += a[…] * b[…]"
    assert line_shape("if size > i and j < size:") == line_shape("if i < size and size > j:") == "if _ < _ and _ < _:"
    assert line_shape("out[cuda.threadIdx.x] = (a[cuda.threadIdx.x] + 10)") == "out[…] = a[…] + 10"
    assert line_shape("total += cache[k]") == line_shape("acc += cache[j]") == "_ += cache[…]"
    assert line_shape("if local_i < size:") == "if _ < _:"
    assert line_shape("cuda.syncthreads()  # wait") == "cuda.syncthreads()"
    assert line_shape("    # only a comment") is None
    assert line_shape("") is None and line_shape(None) is None


def test_a_line_longer_than_a_learner_writes_has_no_shape_and_is_not_parsed():
    """A pasted blob on one line would cost a parse after every run in the app: it clusters by its
    gist instead."""
    long = "out[i] = " + " + ".join(f"a[i + {k}]" for k in range(120))
    assert 1000 < len(long) < 2000
    assert line_shape(long) is None
    assert line_shape("out[i] = " + " + ".join(f"a[i + {k}]" for k in range(70))) is not None  # 900 characters


def test_line_shape_sees_through_operand_order_and_augmented_assignment():
    assert line_shape("cache[t] = b[i] * a[i]") == line_shape("cache[local_i] = a[i] * b[i]")
    assert line_shape("total = total + cache[k]") == line_shape("total += cache[k]")
    assert line_shape("total = cache[k] + total") == line_shape("total += cache[k]")
    assert line_shape("x = y + cache[k]") != line_shape("x += cache[k]")  # two names: not the same line
    assert line_shape("out[i] = a[i] - 1") != line_shape("out[i] = 1 - a[i]")  # order matters here


HOSTILE = {
    "huge line": "out[i] = " + " + ".join(["a[i]"] * 200_000),
    "deep parentheses": "x = " + "(" * 5000 + "1" + ")" * 5000,
    "deep unary minus": "x = " + "-" * 200_000 + "1",
    "deep subscripts": "x = a" + "[a" * 3000 + "]" * 3000,
    "deep lambdas": "f = " + "lambda: " * 3000 + "1",
    "NUL bytes": "out[i] = a[i]\x00 + 1",
    "lone surrogate": "out[i] = a[i] + '\udc80'",
    "escapes in a string": "out[i] = '\x1b]0;pwned\x07\x1b[2J'",
    "bidi in a name": "out[i] = a\u202e[i]",
    "comment only": "# out[i] = a[i] + 1",
    "hash in a string": "x = '#' + a[i]",
    "lambda": "f = lambda q: q + a[q]",
    "walrus": "if (n := a[i]) > 0:",
    "f-string": "x = f'{a[i]!r:>{w}}'",
    "unclosed": "out[i] = (a[i] +",
    "continuation": "    a[i] + b[i])",
    "else": "else:",
    "many statements": "x = 1; y = a[i]; out[i] = y",
    "tabs and CR": "\tout[i]\r= a[i]\x0c+ 1",
    "a long name": "x = " + "n" * 100_000,
    "a long string": "x = '" + "s" * 100_000 + "'",
}


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_line_shape_of_hostile_text_never_raises_and_stays_short_and_printable(text):
    before = sys.getrecursionlimit()
    shape = line_shape(text, "out")
    assert shape is None or (len(shape) <= MAX_TEXT and not has_unsafe(shape) and "\n" not in shape)
    assert sys.getrecursionlimit() == before
    summary_ = failure_summary([_Failure(text)], "from numba import cuda\n" + text + "\n")
    assert all(len(v) <= MAX_TEXT for v in summary_.values() if isinstance(v, str))
    assert not any(has_unsafe(v) for v in summary_.values() if isinstance(v, str))


class _Failure:
    """A verdict's failure as failure_summary reads it, pointing at line 2 and quoting it in its
    message (a compiler's message does)."""
    kind, rule, array, line = "compile_error", None, "out", 2

    def __init__(self, text):
        self.message = f"cannot compile line 2: {text}"
        self.details = [{"other_line": 2}, "not a dict"]
