"""Counter targets on totals: the ways around a per-request target fail, honest speed-ups pass.

Each file in tests/perf_attacks/<puzzle>/ is a right kernel that moves as much as the puzzle's
starter (or more) on a GPU, written so that every request looks ideal one at a time: an access on
a line of its own per lane or per branch, a column read spread over barrier phases, a shared
atomic for the whole block, a chain of 255 barrier steps with one working thread each. Every one
of them but unpadded_read_one_lane_per_barrier passed its puzzle's targets while a target was a
per-request ratio and a request grouped each lane's n-th run of a line across barrier phases; that
one failed then on its conflicts, and is here because a minimum of wavefronts counted phase by
phase would let it through. Each is checked as a learner's file is, by the real engine, on every
fixed config and random ones, on several seeds: it must fail, with `perf_target` alone (its output
is right), on the counters named below. The honest side is tests/honest/perf_*/
(test_invariants.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.engine.judge import check_sim
from tutor.puzzles import load_catalog

ATTACKS = Path(__file__).resolve().parents[1] / "perf_attacks"
CATALOG = load_catalog()
SEEDS = (1, 2, 3)
# Barriers are dear on the simulator (a chain of 255 is about 10 s of CPU a check); the watchdog is
# wall-clock, and every kernel here ends, so only a hang may stop one.
WALL_LIMIT = 180.0

# which counters each attack must miss (on at least one config of every seed)
MISSES = {
    "perf_copy/split_per_lane": {"global_load_efficiency", "global_store_efficiency"},
    "perf_copy/split_per_pair": {"global_load_efficiency", "global_store_efficiency"},
    "perf_transpose_shared/naive_split_per_lane": {"global_store_efficiency"},
    "perf_transpose_padded/naive_split_per_lane": {"global_store_efficiency"},
    "perf_transpose_padded/unpadded_read_split_per_lane": {"shared_extra_wavefronts"},
    "perf_transpose_padded/unpadded_read_one_lane_per_barrier": {"shared_requests"},
    "perf_reduce_sequential/shared_atomic": {"shared_extra_wavefronts"},
    "perf_reduce_sequential/one_thread_per_barrier": {"shared_lanes_per_request", "shared_requests"},
    # one lane per syncwarp step: a request is also one warp phase's (counters.requests)
    "perf_reduce_sequential/syncwarp_chain": {"shared_lanes_per_request", "shared_requests",
                                              "shared_extra_wavefronts"},
}


def attack_runs():
    """Each attack on each seed; the first seed in every run, the others with the whole
    verifications (e2e): a chain of 255 barriers takes 10 to 20 s a check."""
    for path in sorted(ATTACKS.glob("*/*.py")):
        for seed in SEEDS:
            yield pytest.param(path, seed, id=f"{path.parent.name}-{path.stem}-seed{seed}",
                               marks=[] if seed == SEEDS[0] else [pytest.mark.e2e])


def test_every_attack_names_what_it_must_miss():
    assert sorted(f"{p.parent.name}/{p.stem}" for p in ATTACKS.glob("*/*.py")) == sorted(MISSES)


@pytest.mark.parametrize("path, seed", list(attack_runs()))
def test_a_request_split_or_serialised_to_look_ideal_fails_on_the_totals(path, seed):
    pid = path.parent.name
    verdict = check_sim(CATALOG.get(pid), path.read_text(), path.name, seed=seed, compile=False,
                        keep_traces=False, timeout=WALL_LIMIT).verdict
    told = [f"{f.kind} ({f.config}): {f.message}" for f in verdict.failures]
    assert not verdict.passed
    assert set(verdict.kinds()) == {"perf_target"}, told
    missed = {f.details[0]["counter"] for f in verdict.failures}
    assert MISSES[f"{pid}/{path.stem}"] <= missed, told


def test_a_missed_efficiency_names_the_totals_and_a_line_of_the_split():
    """The per-line detail stays for the explanation: the worst line is one of the 32 copies,
    whose sectors other requests pulled too."""
    path = ATTACKS / "perf_copy" / "split_per_lane.py"
    verdict = check_sim(CATALOG.get("perf_copy"), path.read_text(), path.name, seed=1, compile=False,
                        keep_traces=False, timeout=WALL_LIMIT).verdict
    load = next(f for f in verdict.failures if f.details[0]["counter"] == "global_load_efficiency")
    assert load.config == "256 values, one block"
    assert load.message.startswith("Global loads moved 256 32-byte sectors where the elements they read fill 32: "
                                   "12% efficiency; this puzzle asks for at least 100%.")
    copies = [n for n, text in enumerate(path.read_text().splitlines(), 1) if text.strip() == "out[k] = a[k]"]
    assert load.line in copies and "of them sectors that other requests pulled too" in load.message
    assert "split over several instructions" in load.message


def test_a_shared_atomic_for_the_whole_block_is_told_its_serialised_updates():
    path = ATTACKS / "perf_reduce_sequential" / "shared_atomic.py"
    verdict = check_sim(CATALOG.get("perf_reduce_sequential"), path.read_text(), path.name, seed=1, compile=False,
                        keep_traces=False, timeout=WALL_LIMIT).verdict
    extra = next(f for f in verdict.failures if f.details[0]["counter"] == "shared_extra_wavefronts")
    # one block: a store, 8 atomic requests of 32 lanes on one word, a load: 1 + 8 * 32 + 1 wavefronts
    assert extra.details[0]["value"] == 8 * 31
    assert extra.message.startswith("Shared memory took 258 wavefronts where the accesses need 10 ")
    assert extra.line == 21 and "update one word with an atomic" in extra.message  # cuda.atomic.add(total, 0, a[i])
