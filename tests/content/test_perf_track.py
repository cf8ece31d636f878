"""The performance track: every starter is right and slow, every reference right and fast.

A perf puzzle's starter is a correct kernel (right output, no race, within its budget) that misses
one of the puzzle's [perf] counter targets; the learner's job is speed, not correctness. So the
starter must fail with kind `perf_target` and nothing else, and pass outright once the targets are
taken away; the reference must pass with them, on the fixed configs and on the random ones.
"""

import dataclasses

import pytest

from tutor.engine.judge import check_sim
from tutor.puzzles import load_catalog

SEEDS = (1, 2)
TRACK = next((t for t in load_catalog().tracks if t.id == "performance"), None)
PERF = TRACK.puzzles if TRACK else []


def failures(verdict) -> list[str]:
    return [f"{f.kind} ({f.config}): {f.message}" for f in verdict.failures]


def test_the_track_lists_seven_perf_puzzles_after_advanced(catalog):
    ids = [t.id for t in catalog.tracks]
    assert "performance" in ids and ids.index("performance") == ids.index("advanced") + 1
    assert len(PERF) == 7 and all(pid.startswith("perf_") for pid in PERF)


@pytest.mark.parametrize("pid", PERF)
def test_every_perf_puzzle_has_targets(catalog, pid):
    assert catalog.get(pid).perf, f"{pid}: no [perf] targets"


@pytest.mark.parametrize("pid", PERF)
def test_the_reference_passes_every_target_on_every_config(catalog, pid):
    puzzle = catalog.get(pid)
    for seed in SEEDS:
        verdict = check_sim(puzzle, puzzle.reference, f"{pid}/reference.py", seed=seed, compile=False).verdict
        assert verdict.passed, (pid, seed, failures(verdict))


@pytest.mark.parametrize("pid", PERF)
def test_the_starter_is_right_but_misses_a_target(catalog, pid):
    puzzle = catalog.get(pid)
    for seed in SEEDS:
        verdict = check_sim(puzzle, puzzle.starter, f"{pid}/starter.py", seed=seed, compile=False).verdict
        assert not verdict.passed, (pid, seed)
        kinds = set(verdict.kinds())
        assert "perf_target" in kinds, (pid, seed, failures(verdict))
        assert kinds == {"perf_target"}, (pid, seed, failures(verdict))  # right output, races, bounds, budget


@pytest.mark.parametrize("pid", PERF)
def test_the_starter_passes_once_the_targets_are_taken_away(catalog, pid):
    """What makes it a performance puzzle: judged by its output, budget and races alone, the
    starter is already a solution."""
    bare = dataclasses.replace(catalog.get(pid), perf={})
    for seed in SEEDS:
        verdict = check_sim(bare, bare.starter, f"{pid}/starter.py", seed=seed, compile=False).verdict
        assert verdict.passed, (pid, seed, failures(verdict))


# -- ways around a counter: each passed the first version of the track ---------------------------
ATOMIC_PER_THREAD = """
from numba import cuda

TPB = 256


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    if i < size:
        cuda.atomic.add(out, cuda.blockIdx.x, a[i])
"""

SHUFFLE_THEN_ATOMIC_PER_WARP = """
import numba
from numba import cuda

TPB = 256
WARP = 32
WARPS = 8
FULL_MASK = 0xffffffff


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    total = numba.float32(0)
    if i < size:
        total = a[i]
    offset = WARP // 2
    while offset > 0:
        total += cuda.shfl_down_sync(FULL_MASK, total, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, cuda.blockIdx.x, total)
"""


def _starter_diluted(catalog, pid: str, loads: int) -> str:
    """The slow starter with full-warp shared loads added, to lift an average of lanes per request."""
    starter = catalog.get(pid).starter
    padding = "".join(f"    pad{n} = cache[t]\n" for n in range(loads))
    return starter.replace("    cuda.syncthreads()\n", "    cuda.syncthreads()\n" + padding, 1)


@pytest.mark.parametrize("pid, source", [
    ("perf_reduce_shuffle", ATOMIC_PER_THREAD),             # no shared memory: 0 shared requests
    ("perf_reduce_shuffle", SHUFFLE_THEN_ATOMIC_PER_WARP),  # shuffles, then 8 atomics per block cell
    ("perf_reduce_sequential", ATOMIC_PER_THREAD),
    ("perf_reduce_sequential", "diluted"),                  # the interleaved tree, its mean lifted to 23
], ids=["shuffle-atomic-per-thread", "shuffle-atomic-per-warp", "sequential-atomic-per-thread",
        "sequential-diluted"])
def test_ways_around_a_reduction_counter_fail(catalog, pid, source):
    if source == "diluted":
        source = _starter_diluted(catalog, pid, 24)
    verdict = check_sim(catalog.get(pid), source, "cheat.py", seed=1, compile=False).verdict
    assert not verdict.passed, (pid, source)
    assert set(verdict.kinds()) <= {"perf_target", "technique_missing"}, failures(verdict)  # the output was right
