"""Which memory cells two threads could disagree about, found in a few linear numpy passes.

A cell can only be raced on, or read differently when threads run in another order, where some
thread writes it and another thread touches it: in the same barrier phase, or from another block.
Every other cell reads the same whatever order the threads run in. Both the race detector and the
lanes' order check sort their accesses by cell to decide; sorting a big launch's half a million
accesses costs more than the launch itself, so both first keep only the accesses of contested
cells, which a correct kernel mostly has none of. The answer is a superset: callers still run
their exact checks on what it keeps.
"""

from __future__ import annotations

import numpy as np

DENSE_LIMIT = 1 << 23  # keys up to this many are looked up in a flat table; beyond, by binary search


def contested(aid, flat, block, phase, thread, write, cross_blocks=None) -> np.ndarray:
    """Per access, whether its cell is contested: some write to it and an access to it by another
    thread in the same phase, or (where `cross_blocks` is true for the access, or for every access
    when it is None) by another block in any phase. All arguments are arrays of one length."""
    n = len(aid)
    w = np.flatnonzero(write)
    if n == 0 or len(w) == 0:
        return np.zeros(n, dtype=bool)
    flat = np.asarray(flat, dtype=np.int64)
    if int(flat.min()) < 0:  # not a cell of the array: leave it to the exact checks
        return np.ones(n, dtype=bool)
    rank = _rank(np.asarray(aid, dtype=np.int64))
    phase = np.asarray(phase, dtype=np.int64)
    phases = int(phase.max()) + 1
    # first by array: an access can only be contested where its array is written in its phase,
    # or written at all where another block may be the writer (a tiny table, one gather)
    arrays = int(rank.max()) + 1
    coarse = rank * phases + phase
    in_phase = np.zeros(arrays * phases, dtype=bool)
    in_phase[coarse[w]] = True
    keep = in_phase[coarse]
    written = np.zeros(arrays, dtype=bool)
    written[rank[w]] = True
    keep |= written[rank] if cross_blocks is None else written[rank] & cross_blocks
    kept = np.flatnonzero(keep)
    if not len(kept):
        return np.zeros(n, dtype=bool)
    # then by cell, on what the first pass kept
    every_cell = rank * (int(flat.max()) + 1) + flat
    cells = int(every_cell.max()) + 1
    cell = every_cell[kept]
    block = np.asarray(block, dtype=np.int64)[kept]
    thread = np.asarray(thread, dtype=np.int64)[kept]
    phase = phase[kept]
    w = np.flatnonzero(np.asarray(write)[kept])
    # another block: the block of one write of the cell, against every access's block
    writer = _writer_of(cell[w], block[w], cell, cells)
    hit = (writer >= 0) & (block != writer)
    if cross_blocks is not None:
        hit &= np.asarray(cross_blocks)[kept]
    # the same phase, another thread: where no other block touches a written cell, its block is
    # the writer's, so (cell, phase) names one block's phase
    key = cell * phases + phase
    writer = _writer_of(key[w], thread[w], key, cells * phases)
    hit |= (writer >= 0) & (thread != writer)
    if not hit.any():
        return np.zeros(n, dtype=bool)
    if cells > DENSE_LIMIT:
        return np.isin(every_cell, cell[hit])
    table = np.zeros(cells, dtype=bool)
    table[cell[hit]] = True
    return table[every_cell]


def _rank(aid) -> np.ndarray:
    """Arrays numbered from 0 up, in the order of their ids."""
    lo, hi = int(aid.min()), int(aid.max())
    if hi - lo < DENSE_LIMIT:
        present = np.zeros(hi - lo + 1, dtype=bool)
        present[aid - lo] = True
        ids = np.flatnonzero(present)
        number = np.empty(hi - lo + 1, dtype=np.int64)
        number[ids] = np.arange(len(ids))
        return number[aid - lo]
    return np.searchsorted(np.unique(aid), aid)


def _writer_of(wkeys, wvals, keys, span) -> np.ndarray:
    """Per key, the value of one write with that key (any one of them), or -1 where none has it."""
    if span <= DENSE_LIMIT:
        table = np.full(span, -1, dtype=np.int64)
        table[wkeys] = wvals
        return table[keys]
    order = np.argsort(wkeys, kind="stable")
    sk, sv = wkeys[order], wvals[order]
    pos = np.minimum(np.searchsorted(sk, keys), len(sk) - 1)
    return np.where(sk[pos] == keys, sv[pos], -1)
