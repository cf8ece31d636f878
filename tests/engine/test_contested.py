"""contested(): the cells a race or another thread order could touch, found without sorting.

Both the race detector and the lanes' order check now look only at what it keeps, so a cell it
wrongly drops is a race never reported or a lanes run whose reads differ from the thread-by-thread
run's. Its answer is checked against the definition, access by access, on random sets of accesses
(both its flat-table and its binary-search paths); then on launches where the write and the other
access are in different phases and blocks, which an array-by-phase filter alone would drop."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.engine.lanes_pair import compare_source
from tutor.engine.analysis import detect
from tutor.engine.contested import contested
from tutor.engine.loading.sim_loader import load_for_sim
from tutor.engine.sim.launch import Launch
from tutor.engine.trace import LazyEvents


def by_definition(aid, flat, block, phase, thread, write, cross):
    """A cell is contested where some write to it and another access to it come from two threads
    in one phase, or from two blocks where the access may cross blocks."""
    out = np.zeros(len(aid), dtype=bool)
    cells = {}
    for i in range(len(aid)):
        cells.setdefault((int(aid[i]), int(flat[i])), []).append(i)
    for members in cells.values():
        hit = any(write[w] and thread[a] != thread[w] and (phase[a] == phase[w] or (block[a] != block[w] and cross[a]))
                  for w, a in itertools.product(members, members))
        if hit:
            out[members] = True
    return out


def draw(rng, n, big=False):
    aid = rng.integers(0, 4, n) * (10**8 if big else 1)  # past the flat tables: binary search
    flat = rng.integers(0, 6, n) * (10**7 if big else 1)
    thread = rng.integers(0, 8, n)
    block = thread // 4
    phase = rng.integers(0, 3, n)
    write = rng.random(n) < rng.choice([0.05, 0.3])
    cross = np.isin(aid, aid[:1]) if rng.random() < 0.5 else np.ones(n, dtype=bool)
    return aid, flat, block, phase, thread, write, cross


@pytest.mark.parametrize("big", [False, True])
def test_contested_is_the_definition_on_random_accesses(big):
    rng = np.random.default_rng(7)
    for case in range(400):
        aid, flat, block, phase, thread, write, cross = draw(rng, int(rng.integers(1, 40)), big)
        want = by_definition(aid, flat, block, phase, thread, write, cross)
        got = contested(aid, flat, block, phase, thread, write, cross)
        assert np.array_equal(got, want), f"case {case}"
        everywhere = contested(aid, flat, block, phase, thread, write)  # cross_blocks None: every access
        assert np.array_equal(everywhere, by_definition(aid, flat, block, phase, thread, write,
                                                        np.ones(len(aid), dtype=bool))), f"case {case}"


def test_a_cell_written_in_one_phase_and_read_by_another_block_in_another_is_contested():
    # array 0 is written only in phase 1 and read only in phase 0: by array and phase alone the
    # read would be dropped, but the reader is another block
    aid = np.array([0, 0])
    flat = np.array([3, 3])
    got = contested(aid, flat, np.array([1, 0]), np.array([1, 0]), np.array([5, 1]), np.array([True, False]))
    assert got.tolist() == [True, True]
    # the same between two threads of one block, in two phases: a barrier orders them
    got = contested(aid, flat, np.array([0, 0]), np.array([1, 0]), np.array([2, 1]), np.array([True, False]))
    assert got.tolist() == [False, False]


ACROSS_BLOCKS = '''\
from numba import cuda


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    if b == 0 and t == 0:
        out[0] = out[size - 1]
    cuda.syncthreads()
    if b == 1 and t == 5:
        out[size - 1] = a[i]
'''


def test_a_race_between_blocks_in_different_phases_is_found_on_a_lanes_trace():
    """Block 1 writes out[size-1] after its barrier; block 0 reads it before its own: blocks do not
    wait for each other, so it is a race, and lanes (two blocks of 128 together) must not hide it."""
    size = 256
    module = load_for_sim(ACROSS_BLOCKS, "k.py")
    out = np.zeros(size, np.float32)
    a = np.arange(size, dtype=np.float32)
    launch = Launch(module.kernel, (2,), (128,), [("out", out), ("a", a), ("size", size)], source_lines=module.lines)
    trace = launch.run()
    assert isinstance(trace.events, LazyEvents) and launch.lanes_fallback is None  # ran as lanes
    races = detect.races(trace, "c")
    assert len(races) == 1 and races[0].array == "out" and races[0].index in ((size - 1,), size - 1)
    # and the lanes' own order check keeps it: the same trace as thread by thread
    [(_, _, found)] = compare_source(ACROSS_BLOCKS, [("c", (2,), (128,), [("out", out), ("a", a), ("size", size)])])
    assert found == []


def test_a_lanes_trace_says_its_length_without_building_its_tuples():
    module = load_for_sim(ACROSS_BLOCKS, "k.py")
    size = 256
    trace = Launch(module.kernel, (2,), (128,), [("out", np.zeros(size, np.float32)),
                                                  ("a", np.arange(size, dtype=np.float32)), ("size", size)],
                   source_lines=module.lines).run()
    events = trace.events
    assert len(events) == 4 and bool(events)
    assert events._pending  # still columns: a million-access trace is not turned into tuples by len()
    assert len(list(events)) == 4 and not events._pending and len(events) == 4
