"""From a trace to failures: out of bounds, races, unwritten reads, budgets and wrong output.

Everything here reads a finished Trace; nothing re-runs the kernel. Each failure names the block,
the thread (and the other thread, for a race), the array, the index and the source line, and its
message says what to do about it. Repeats of one mistake (the same array, the same lines) fold into
one failure with a count, so a learner sees three clear messages rather than three hundred.
"""

from __future__ import annotations

from collections import Counter


from ..trace import (ATOMIC, GLOBAL, LOCAL, OOB_READ, OOB_WRITE, READ, SHARED, UNINIT_READ, WRITE, Trace, event_columns,
                    fmt_dim)
from ..contested import contested
from ..verdict import Failure
from tutor.lazy import lazy

np = lazy("numpy", globals(), "np")  # the app starts before numpy loads

MAX_DETAILS = 64


def find_all(trace: Trace, config: str, budget: dict | None = None, require: dict | None = None) -> list[Failure]:
    failures = []
    failures += out_of_bounds(trace, config)
    raced = races(trace, config)
    failures += raced
    failures += uninitialized_reads(trace, config)
    if budget:
        failures += budgets(trace, config, budget)
    if require:
        # a shared read with no barrier before it is the race report's to explain, once
        failures += [f for f in requirements(trace, config, require)
                     if not (raced and f.details and f.details[0].get("why") == "same_phase")]
    return failures


def _who(trace: Trace, tid: int) -> str:
    block, thread = trace.where(tid)
    return f"thread {fmt_dim(thread)} of block {fmt_dim(block)}"


def _cell(trace: Trace, aid: int, flat) -> str:
    info = trace.arrays[aid]
    index = flat if isinstance(flat, tuple) else info.unravel(flat)
    if info.space == GLOBAL:
        return f"{info.name}[{', '.join(str(i) for i in index)}]"
    return f"{info.space} array '{info.name}'[{', '.join(str(i) for i in index)}]"


def _index(trace: Trace, aid: int, flat) -> tuple:
    return tuple(flat) if isinstance(flat, tuple) else trace.arrays[aid].unravel(flat)


# -- out of bounds ---------------------------------------------------------------------------------
def out_of_bounds(trace: Trace, config: str) -> list[Failure]:
    if _none_of(trace, (OOB_READ, OOB_WRITE)):
        return []
    groups: dict = {}
    for n, e in enumerate(trace.events):
        if e[1] == OOB_READ or e[1] == OOB_WRITE:
            groups.setdefault((e[2], e[5], e[1]), []).append(n)
    failures = []
    events = trace.events
    for (aid, line, op), found in groups.items():
        evs = [events[n] for n in found]
        first = evs[0]
        info = trace.arrays[aid]
        index = first[3]
        verb = "reads" if op == OOB_READ else "writes"
        negative = any(i < 0 for i in index if isinstance(i, int))
        why = ("A negative index is out of bounds on a GPU (numpy would wrap it; a GPU reads whatever "
               "memory lies before the array)." if negative else
               f"The array's shape is {tuple(info.shape)}.")
        threads = len({e[0] for e in evs})
        more = f" {threads - 1} other thread(s) did the same." if threads > 1 else ""
        block, thread = trace.where(first[0])
        failures.append(Failure(
            kind="out_of_bounds",
            message=(f"{_who(trace, first[0]).capitalize()} {verb} {_cell(trace, aid, index)} on line {line}, "
                     f"outside the array. {why}{more} {_bounds_advice(trace, info, evs, found)}"),
            config=config, array=info.name, index=tuple(index), block=block, thread=thread, line=line,
            count=threads))
    return failures


def _bounds_advice(trace: Trace, info, evs: list, found: list) -> str:
    """What to do, in the kernel's own words: which index expression went out, along which
    dimension, and what bounds that dimension (the parameter that holds its length, else the
    array's shape or the constant that sized it). Where no parameter holds the length and the
    launch has a thread per element, a guard is not the fix, and the advice says so."""
    shape = tuple(info.shape)
    accesses = _index_expressions(trace, found)
    full = [e[3] for e in evs if isinstance(e[3], tuple) and len(e[3]) == len(shape)
            and all(isinstance(i, int) for i in e[3])]
    if not full or any(len(a) != len(shape) for a in accesses):
        return "Guard the access with a bounds check, or fix the index."
    exprs = accesses[0] if accesses else None
    first = full[0]
    d0 = next(d for d, i in enumerate(first) if i < 0 or i >= shape[d])
    name = f"`{exprs[d0]}`" if exprs else "the index"
    along = f", the index along dimension {d0}," if len(shape) > 1 else ""

    def terms(dims, test):  # one test per expression that went out, over every access on the line
        return " and ".join(dict.fromkeys(f"{a[d]} {test(d)}" for a in accesses for d in dims))

    if first[d0] < 0:
        low = sorted({d for idx in full for d, i in enumerate(idx) if i < 0})
        if not exprs:
            return "Guard the access so that the index never goes below 0."
        return (f"Here {name}{along} is {first[d0]}: guard the access so that it never goes below 0 "
                f"(e.g. `if {terms(low, lambda d: '>= 0')}:`).")
    high = sorted({d for idx in full for d, i in enumerate(idx) if i >= shape[d]})
    bounds = {d: _bound(trace, info, d) for d in high}
    n = shape[d0]
    unit = ("element" if info.space == GLOBAL else "cell") + ("" if n == 1 else "s")
    label = info.label() if info.space != GLOBAL else info.name
    here = f"Here {name}{along} is {first[d0]}, and {label} has {n} {unit}{' along it' if len(shape) > 1 else ''}"
    bound, holder = bounds[d0]
    if info.space != GLOBAL:
        keep = f"Keep {name} below {bound}" + (f" ({holder})" if holder else "")
        block_sized = n in trace.block[:trace.block_nd]
        tail = (": a shared array belongs to one block, so index it by the thread's place in the block "
                "(cuda.threadIdx), not its place in the grid." if info.space == SHARED and block_sized else ".")
        return f"{here}. {keep}{tail}"
    if holder == "none":
        if n == 1:
            return f"{here}, so the only index there is 0."
        others = [(d, k) for d in range(len(shape)) if d != d0
                  for k, v in trace.scalars.items() if v == shape[d]]
        if others:
            d, k = others[0]
            guard = f"`if {terms([d0], lambda _: '< ' + bound)}:`" if accesses else f"a check against `{bound}`"
            return (f"{here}. No parameter of the kernel holds that length, but `{k}` holds its length along "
                    f"dimension {d}: are the indices in the right order? If they are, guard the access with "
                    f"{guard}.")
        if trace.n_blocks * trace.threads_per_block == info.size:
            return (f"{here}. No parameter of the kernel holds that length, and the launch has one thread per "
                    f"element, so a guard is not the fix: the index itself is off. Check how {name} is "
                    f"computed from the thread's position.")
        holder = ""
    said = f" ({holder})" if holder else ""
    if not accesses:
        return f"{here}{said}: guard the access with a bounds check against `{bound}`."
    return f"{here}{said}: guard the access with `if {terms(high, lambda d: '< ' + bounds[d][0])}:`."


def _bound(trace: Trace, info, d: int) -> tuple[str, str]:
    """(what to compare the index with, a note on where it comes from) for dimension d. A global
    array's length is the integer parameter that holds it (`size`); with none, its shape and
    "none"; with several equal ones, its shape. A shared or local array's is the constant it was
    sized with, or the number."""
    n = info.shape[d]
    if info.space != GLOBAL:
        named = [k for k, v in trace.constants.items() if v == n]
        return (named[0], f"{n}") if len(named) == 1 else (str(n), "")
    named = [k for k, v in trace.scalars.items() if v == n]
    if len(named) == 1:
        return named[0], f"`{named[0]}` holds that length"
    shape = f"{info.name}.shape[{d}]"
    if named:
        listed = ", ".join(f"`{k}`" for k in named)
        return shape, f"{listed} all hold {n} in this config: compare with the one that means this length"
    return shape, "none"


def _index_expressions(trace: Trace, found: list) -> list[list[str]]:
    """For each access text the trace noted among the group's events (`a[i, j + 1]`), its index
    expressions, one per dimension (["i", "j + 1"]), the first event's first; [] where none was
    noted, or one could not be read."""
    notes = getattr(trace, "oob_code", None) or {}
    texts = list(dict.fromkeys(notes[n] for n in found if n in notes))
    out = []
    for text in texts:
        parts = _subscript_parts(text)
        if parts is None:
            return []
        out.append(parts)
    return out


def _subscript_parts(text: str) -> list[str] | None:
    import ast

    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    parts: list = []
    if isinstance(node, ast.Call) and len(node.args) >= 2:  # cuda.atomic.add(arr, index, value)
        idx = node.args[1]
        parts = list(idx.elts) if isinstance(idx, ast.Tuple) else [idx]
    else:
        while isinstance(node, ast.Subscript):  # a[i][j]: the outer subscript holds the last index
            sl = node.slice
            parts = (list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]) + parts
            node = node.value
    if not parts or any(isinstance(p, ast.Slice) for p in parts):
        return None
    return [ast.unparse(p) for p in parts]


# -- unwritten reads -------------------------------------------------------------------------------
def uninitialized_reads(trace: Trace, config: str) -> list[Failure]:
    """Reads of cells nobody wrote before, judged as Valgrind's memcheck judges them: an error once
    the value read is used (stored, branched on, an index, converted, given to an atomic), not while
    it is only copied or computed with, and not if it is thrown away. The report names the read.
    A cell that another thread writes later in the same phase is not unwritten memory but a missing
    barrier: the race report covers it. The reading thread's own later write excuses nothing
    (`cache[t] += x` on a cell nobody set is garbage plus x)."""
    if _none_of(trace, (UNINIT_READ,)):
        return []
    reads = _used_unwritten_reads(trace)
    if not reads:
        return []
    tpb = trace.threads_per_block
    wanted = {(e[2], e[3], e[6]) for e, _ in reads}
    writers: dict = {}
    for e in trace.events:
        if e[1] == WRITE and (e[2], e[3], e[6]) in wanted:
            writers.setdefault((e[2], e[3], e[6]), []).append(e)
    groups: dict = {}
    for e, used_on in reads:
        if _written_by_another_thread(e, writers.get((e[2], e[3], e[6]), ()), tpb):
            continue
        info = trace.arrays[e[2]]
        groups.setdefault((info.space, info.name, e[5]), []).append((e, used_on))
    failures = []
    for (space, name, line), evs in groups.items():
        first, used_on = evs[0]
        block, thread = trace.where(first[0])
        threads = len({e[0] for e, _ in evs})
        more = f" {threads - 1} other thread(s) did the same." if threads > 1 else ""
        where = "shared memory starts with whatever was there before" if space == SHARED else \
            "local arrays start with garbage"
        use = f" and uses the value on line {used_on}" if used_on is not None and used_on != line else ""
        failures.append(Failure(
            kind="uninitialized_read",
            message=(f"{_who(trace, first[0]).capitalize()} reads {_cell(trace, first[2], first[3])} on line "
                     f"{line}{use}, but no thread had written that cell yet: on a GPU {where}.{more} Make sure "
                     f"some thread writes every cell that is read (threads past the end can write 0), "
                     f"and put a barrier between the writes and the reads."),
            config=config, array=name, index=_index(trace, first[2], first[3]), block=block, thread=thread,
            line=line, count=threads))
    return failures


def _used_unwritten_reads(trace: Trace) -> list:
    """(UNINIT_READ event, line that used its value or None), in trace order: the reads whose value
    the kernel used, or every one where the trace did not follow uses."""
    events = trace.events
    used = getattr(trace, "uninit_used", None)
    if used is None:
        return [(e, None) for e in events if e[1] == UNINIT_READ]
    n = len(events)
    return [(events[i], used[i]) for i in sorted(i for i in used if type(i) is int and 0 <= i < n)
            if events[i][1] == UNINIT_READ]


def _written_by_another_thread(read, writes, tpb) -> bool:
    """A plain write of the read's cell in its phase by another thread (the race report's case),
    unless both are lanes of one warp and a syncwarp orders the read first."""
    warp = (read[0] % tpb) // 32
    for w in writes:
        if w[0] != read[0] and not ((w[0] % tpb) // 32 == warp and w[7] != read[7]):
            return True
    return False


# -- races -----------------------------------------------------------------------------------------
def races(trace: Trace, config: str) -> list[Failure]:
    """Same cell, two threads, at least one plain write: within one barrier phase of a block, or
    across blocks for global memory (blocks never wait for each other). Lanes of one warp separated
    by a syncwarp are ordered and do not race."""
    spaces = [a.space for a in trace.arrays]
    tpb = trace.threads_per_block
    found: dict = {}
    for aid, evs in _suspect_cells(trace, spaces):
        writes = [e for e in evs if e[1] == WRITE]
        pair = None
        if spaces[aid] == GLOBAL:
            w = writes[0]
            wb = w[0] // tpb
            for e in evs:
                if e[0] // tpb != wb:
                    pair = (w, e, True)
                    break
        if pair is None:
            pair = _race_in_phase(evs, tpb)
        if pair is None:
            continue
        w, o, cross = pair
        same = _same_value_writes(evs, w, o, cross, tpb)
        key = (aid if spaces[aid] == GLOBAL else (trace.arrays[aid].name, SHARED), w[5], o[5], o[1], cross,
               same)
        if key in found:
            found[key][1] += 1
            if w[6] < found[key][0][0][6]:
                found[key][0] = pair  # show the earliest phase where it happens
        else:
            found[key] = [pair, 1]
    failures = []
    for (_, wline, oline, oop, cross, same), ((w, o, _), count) in found.items():
        info = trace.arrays[w[2]]
        what = {READ: "reads", UNINIT_READ: "reads", WRITE: "writes", ATOMIC: "atomically updates"}[oop]
        block, thread = trace.where(w[0])
        oblock, othread = trace.where(o[0])
        cells = f" ({count} cells of '{info.name}' race the same way)" if count > 1 else ""
        if same:
            # Every writer stores one value: nothing is lost today, so a barrier or an atomic is the
            # wrong cure. It stays a race (the memory model says so) and costs a write per thread.
            other = _who(trace, o[0]) if cross else f"thread {fmt_dim(othread)}"
            where = "" if cross else f", with no barrier between them (both in barrier phase {w[6]})"
            one = ("let one thread of the grid write it, e.g. under `if cuda.grid(1) == 0:`" if cross else
                   "let one thread write it, e.g. under `if cuda.threadIdx.x == 0:`")
            then = (", then a cuda.syncthreads() before the other threads read it" if same == "read" else "")
            msg = (f"{_who(trace, w[0]).capitalize()} writes {_cell(trace, w[2], w[3])} on line {wline} and "
                   f"{other} writes the same value ({_fmt(w[4])}) to it on line {oline}{where}{cells}. "
                   f"The result looks right, but on a GPU this is still a race, and every "
                   f"{'block' if cross else 'thread'} pays for a write that one thread can do: {one}{then}.")
        elif cross:
            msg = (f"{_who(trace, w[0]).capitalize()} writes {_cell(trace, w[2], w[3])} on line {wline} and "
                   f"{_who(trace, o[0])} {what} it on line {oline}{cells}. Blocks run in any order and "
                   f"cannot wait for each other: give each block its own cells, or use cuda.atomic.add.")
        else:
            msg = (f"{_who(trace, w[0]).capitalize()} writes {_cell(trace, w[2], w[3])} on line {wline} and "
                   f"thread {fmt_dim(othread)} {what} it on line {oline}, with no barrier between them "
                   f"(both in barrier phase {w[6]}){cells}. Which one goes first is up to the hardware: "
                   + _barrier_advice(w[0], o[0], tpb) + (", or use an atomic." if oop in (WRITE, ATOMIC) else "."))
        failures.append(Failure(kind="race", message=msg, config=config, array=info.name,
                                index=_index(trace, w[2], w[3]), block=block, thread=thread,
                                other_thread=othread, line=wline, count=count,
                                details=[{"other_block": list(oblock), "other_line": oline}]))
    return failures


def _barrier_advice(writer: int, other: int, tpb: int) -> str:
    """The barrier that orders two threads of one block. Lanes of one warp, in a block of several
    warps, need only a cuda.syncwarp(): the warp-level steps they race in (a reduction's last
    steps, under `if lane < 16:`) run in a branch the rest of the block does not take, where a
    cuda.syncthreads() would be reached by some threads only. A block of one warp keeps the
    block-wide barrier its lessons teach; threads of two warps need it."""
    warp = (writer % tpb) // 32
    if tpb > 32 and (other % tpb) // 32 == warp:
        return (f"both are lanes of warp {warp}, so put a cuda.syncwarp() between the write and the other "
                "access (it orders the lanes of one warp; a cuda.syncthreads() would have to be reached by every "
                "thread of the block)")
    return "put a cuda.syncthreads() between the write and the other access"


def _same_value_writes(evs, w, o, cross, tpb):
    """Whether a racing pair is only threads storing one value: both plain writes, and every plain
    write to the cell where they race (the block's barrier phase, or for blocks the whole launch)
    stores that value, with no atomics. "read" when some other thread also reads it there."""
    if o[1] != WRITE or w[4] != o[4]:
        return False
    scope = evs if cross else [e for e in evs if e[6] == w[6] and e[0] // tpb == w[0] // tpb]
    reads = False
    for e in scope:
        if e[1] == ATOMIC or (e[1] == WRITE and e[4] != w[4]):
            return False
        if e[1] != WRITE and e[0] != w[0]:
            reads = True
    return "read" if reads and not cross else True


def _suspect_cells(trace: Trace, spaces: list):
    """Cells that two threads touch with at least one plain write: in one (block, phase), or, for
    global memory, from two blocks. Sorting in numpy finds them; only they reach Python loops, so
    a correct kernel's hundreds of thousands of accesses cost a few vectorised passes."""
    racy = {i for i, sp in enumerate(spaces) if sp == SHARED or sp == GLOBAL}
    columns = event_columns(trace)
    if columns is not None:  # a trace of lanes: its columns, filtered as the tuples would be
        racy_aid = np.zeros(len(spaces), dtype=bool)
        racy_aid[list(racy)] = True
        op = columns["op"]
        keep = np.flatnonzero(((op <= ATOMIC) | (op == UNINIT_READ)) & racy_aid[columns["aid"]])
        if len(keep) < 2:
            return []
        tid, op, aid, flat, phase = (columns[k][keep] for k in ("tid", "op", "aid", "flat", "phase"))
        evs = _Picked(trace.events, keep)
    else:
        evs = [e for e in trace.events if (e[1] <= ATOMIC or e[1] == UNINIT_READ) and e[2] in racy]
        if len(evs) < 2:
            return []
        if len(evs) < SMALL_TRACE:
            return _suspect_cells_small(evs, trace.threads_per_block)
        tid, op, aid, flat, phase = (np.fromiter((e[k] for e in evs), dtype=np.int64, count=len(evs))
                                     for k in (0, 1, 2, 3, 6))
    tid = tid.astype(np.int64)
    aid = aid.astype(np.int64)
    is_global_aid = np.array([sp == GLOBAL for sp in spaces])
    # only cells another thread could disagree about go on to the sorts below
    picked = np.flatnonzero(contested(aid, flat, tid // trace.threads_per_block, phase, tid, op == WRITE,
                                      is_global_aid[aid]))
    if not len(picked):
        return []
    if len(picked) < len(tid):
        tid, op, aid, flat, phase = tid[picked], op[picked], aid[picked], flat[picked], phase[picked]
        evs = _Picked(evs, picked)
    cell = aid * (int(flat.max()) + 1) + flat.astype(np.int64)
    block = tid // trace.threads_per_block
    is_write = op == WRITE
    suspects = set()
    # one block, one phase
    run = (block * (int(phase.max()) + 1) + phase) * trace.threads_per_block + tid % trace.threads_per_block
    if columns is not None and len(run) > 1 and bool((run[1:] >= run[:-1]).all()):
        # a lanes trace is already in block, phase and thread order: sorting by cell, stably, is enough
        order = np.argsort(cell, kind="stable")
    else:
        order = np.lexsort((tid, phase, block, cell))
    c, b, p, t, w = cell[order], block[order], phase[order], tid[order], is_write[order]
    new_group = np.ones(len(order), dtype=bool)
    new_group[1:] = (c[1:] != c[:-1]) | (b[1:] != b[:-1]) | (p[1:] != p[:-1])
    starts = np.flatnonzero(new_group)
    tid_change = np.zeros(len(order), dtype=np.int64)
    tid_change[1:] = (t[1:] != t[:-1]) & ~new_group[1:]
    multi = np.add.reduceat(tid_change, starts) > 0
    has_write = np.maximum.reduceat(w.astype(np.int64), starts) > 0
    for g in np.flatnonzero(multi & has_write):
        suspects.add(int(c[starts[g]]))
    # two blocks, global memory
    is_global = is_global_aid[aid]
    if is_global.any():
        gi = np.flatnonzero(is_global)
        if columns is not None and bool((block[gi][1:] >= block[gi][:-1]).all()):
            order = gi[np.argsort(cell[gi], kind="stable")]  # blocks in order already
        else:
            order = gi[np.lexsort((block[gi], cell[gi]))]
        c, b, w = cell[order], block[order], is_write[order]
        new_group = np.ones(len(order), dtype=bool)
        new_group[1:] = c[1:] != c[:-1]
        starts = np.flatnonzero(new_group)
        bchange = np.zeros(len(order), dtype=np.int64)
        bchange[1:] = (b[1:] != b[:-1]) & ~new_group[1:]
        multi = np.add.reduceat(bchange, starts) > 0
        has_write = np.maximum.reduceat(w.astype(np.int64), starts) > 0
        for g in np.flatnonzero(multi & has_write):
            suspects.add(int(c[starts[g]]))
    if not suspects:
        return []
    chosen = np.flatnonzero(np.isin(cell, np.fromiter(suspects, dtype=np.int64)))
    by_cell: dict = {}
    for i in chosen:
        by_cell.setdefault(int(cell[i]), []).append(evs[i])
    return [(lst[0][2], lst) for lst in by_cell.values()]


SMALL_TRACE = 4000  # below this, numpy's fixed costs outweigh a plain loop


class _Picked:
    """evs[i] of the events kept by a filter (indices into the trace's events), read as tuples
    only for the few suspect cells."""

    def __init__(self, events, keep):
        self.events, self.keep = events, keep

    def __getitem__(self, i):
        return self.events[int(self.keep[i])]


def _none_of(trace: Trace, ops: tuple) -> bool:
    """Whether a trace held as columns has no event of these kinds (False where it is not)."""
    columns = event_columns(trace)
    return columns is not None and not np.isin(columns["op"], ops).any()


def _suspect_cells_small(evs, tpb):
    cells: dict = {}
    for e in evs:
        key = (e[2], e[3])
        lst = cells.get(key)
        if lst is None:
            cells[key] = [e]
        else:
            lst.append(e)
    out = []
    for (aid, _), lst in cells.items():
        if len(lst) < 2:
            continue
        t0 = lst[0][0]
        if all(e[0] == t0 for e in lst) or not any(e[1] == WRITE for e in lst):
            continue
        out.append((aid, lst))
    return out


def _race_in_phase(evs, tpb):
    """A plain write and another thread's access in one block and one barrier phase, unless both
    lanes are in one warp and a syncwarp separates them. Linear in the events for each writer."""
    groups: dict = {}
    for e in evs:
        groups.setdefault((e[0] // tpb, e[6]), []).append(e)
    for group in groups.values():
        if len(group) < 2:
            continue
        writers = {}
        for e in group:
            if e[1] == WRITE and e[0] not in writers:
                writers[e[0]] = e
        for w in writers.values():
            wwarp = (w[0] % tpb) // 32
            for e in group:
                if e[0] == w[0]:
                    continue
                if (e[0] % tpb) // 32 == wwarp and e[7] != w[7]:
                    continue  # ordered by a syncwarp
                return (w, e, False)
    return None


def racing_threads(trace: Trace) -> set[int]:
    """Every thread on either side of some racing pair, for drawing: races() names one example pair
    per mistake, but a learner looking at the grid needs to see all the threads involved. Same rules
    as races(): a plain write and another thread's access to one cell in one block's barrier phase
    (unless a syncwarp orders two lanes of one warp), or, in global memory, from two blocks."""
    spaces = [a.space for a in trace.arrays]
    tpb = trace.threads_per_block
    out: set = set()
    for aid, evs in _suspect_cells(trace, spaces):
        if spaces[aid] == GLOBAL:
            _racing_across_blocks(evs, tpb, out)
        groups: dict = {}
        for e in evs:
            groups.setdefault((e[0] // tpb, e[6]), []).append(e)
        for group in groups.values():
            if len(group) > 1:
                _racing_in_phase(group, tpb, out)
    return out


def _racing_across_blocks(evs, tpb, out: set) -> None:
    """Global memory: a plain write races every access from another block."""
    writer_blocks = {e[0] // tpb for e in evs if e[1] == WRITE}
    if not writer_blocks or len({e[0] // tpb for e in evs}) < 2:
        return
    for e in evs:
        if len(writer_blocks) > 1 or e[0] // tpb not in writer_blocks or e[1] == WRITE:
            out.add(e[0])  # a writer in another block, or a writer that another block touches


def _racing_in_phase(group, tpb, out: set) -> None:
    """_race_in_phase's rule applied to the whole (block, phase) group rather than stopping at the
    first pair: each thread's first plain write pairs with every other thread's access, unless both
    are lanes of one warp on either side of a syncwarp. Counting threads per warp and per (warp,
    warp phase) keeps this linear in the group."""
    writers: dict = {}
    for e in group:
        if e[1] == WRITE and e[0] not in writers:
            writers[e[0]] = e
    if not writers:
        return

    def tally(events):
        per_warp: dict = {}
        per_wphase: dict = {}
        for e in events:
            warp = (e[0] % tpb) // 32
            per_warp.setdefault(warp, set()).add(e[0])
            per_wphase.setdefault((warp, e[7]), set()).add(e[0])
        return per_warp, per_wphase, sum(len(s) for s in per_warp.values())

    def pairs(e, counts) -> bool:
        per_warp, per_wphase, n = counts
        warp = (e[0] % tpb) // 32
        if n - len(per_warp.get(warp, ())) > 0:
            return True  # a partner in another warp: never ordered
        same = per_wphase.get((warp, e[7]), ())
        return len(same) > (1 if e[0] in same else 0)  # a partner between the same syncwarps

    by_writers = tally(writers.values())
    by_all = tally(group)
    for e in group:
        if e[0] not in out and pairs(e, by_writers):
            out.add(e[0])
    for w in writers.values():
        if w[0] not in out and pairs(w, by_all):
            out.add(w[0])


# -- budgets ---------------------------------------------------------------------------------------
def budgets(trace: Trace, config: str, budget: dict) -> list[Failure]:
    spaces = [a.space for a in trace.arrays]
    reads: Counter = Counter()
    writes: Counter = Counter()
    columns = event_columns(trace)
    if columns is not None:
        is_global = np.array([sp == GLOBAL for sp in spaces], dtype=bool)[columns["aid"]]
        op, tid = columns["op"], columns["tid"]
        for counter, kinds in ((reads, (READ, OOB_READ)), (writes, (WRITE, ATOMIC, OOB_WRITE))):
            mine = tid[is_global & np.isin(op, kinds)]
            if len(mine):
                ids, n = np.unique(mine, return_counts=True)
                counter.update(dict(zip(ids.tolist(), n.tolist())))
    for e in (trace.events if columns is None else ()):
        if spaces[e[2]] != GLOBAL:
            continue
        op = e[1]
        if op == READ or op == OOB_READ:
            reads[e[0]] += 1
        elif op == WRITE or op == ATOMIC or op == OOB_WRITE:
            writes[e[0]] += 1
    failures = []
    for key, counter, noun, advice in (
        ("global_reads", reads, "global reads",
         "Read each value from global memory once (into a register or shared memory) and reuse it."),
        ("global_writes", writes, "global writes",
         "Accumulate in a local variable or shared memory and write the result once."),
    ):
        limit = budget.get(key)
        if limit is None:
            continue
        over = [(n, tid) for tid, n in counter.items() if n > limit]
        if not over:
            continue
        n, tid = max(over, key=lambda p: (p[0], -p[1]))
        ops = (READ, OOB_READ) if key == "global_reads" else (WRITE, ATOMIC, OOB_WRITE)
        listing = [f"{_cell(trace, e[2], e[3])} (line {e[5]})" for e in trace.events
                   if e[0] == tid and e[1] in ops and spaces[e[2]] == GLOBAL]
        shown = ", ".join(listing[:8]) + (", ..." if len(listing) > 8 else "")
        block, thread = trace.where(tid)
        others = f" {len(over) - 1} other thread(s) are over too." if len(over) > 1 else ""
        failures.append(Failure(
            kind="budget_exceeded",
            message=(f"{_who(trace, tid).capitalize()} made {n} {noun}; the budget is {limit} per thread. "
                     f"Its {noun}: {shown}.{others} {advice}"),
            config=config, block=block, thread=thread, line=_first_line(trace, tid, ops, spaces),
            count=len(over), details=[{"budget": key, "limit": limit, "used": n}]))
    limit = budget.get("shared_size")
    if limit is not None:
        per_block: Counter = Counter()
        for a in trace.arrays:
            if a.space == SHARED:
                per_block[a.block] += a.size
        for block, size in per_block.items():
            if size > limit:
                failures.append(Failure(
                    kind="budget_exceeded",
                    message=(f"Block {fmt_dim(block)} allocates {size} elements of shared memory; the budget "
                             f"is {limit} (the lesson's last section gives it for every config). Size "
                             "the shared arrays by what one block holds at once: its threads' values, or "
                             "its tile."),
                    config=config, block=block, details=[{"budget": "shared_size", "limit": limit,
                                                          "used": size}]))
                break
    return failures


def _first_line(trace, tid, ops, spaces):
    for e in trace.events:
        if e[0] == tid and e[1] in ops and spaces[e[2]] == GLOBAL:
            return e[5]
    return None


# -- what the puzzle practises --------------------------------------------------------------------
PASS_THROUGH_SHARED = ("This puzzle practises passing values through shared memory: write them to a shared "
                       "array, wait at cuda.syncthreads(), then compute what you write from what you read "
                       "back.")


def requirements(trace: Trace, config: str, require: dict) -> list[Failure]:
    """A puzzle's [require] table (content/FORMAT.md) judged on the trace: a kernel whose output is
    right can still skip the technique the lesson teaches (a plain copy for `shared`, one atomic per
    thread for `dot`, a naive transpose), and passing it would teach nothing.

    `shared`: every thread that writes `out` has, before its first write, read a shared cell that
    was written in an earlier barrier phase ("after_barrier"), or one that another thread wrote in
    an earlier phase ("from_other_threads"). The trace records accesses, not where a value went, so
    a thread that reads the cell and then writes something else still passes: this check closes the
    kernels that never use shared memory, or use it without a barrier, not every pretence.
    `out_cell_writes_per_block`: no block writes one cell of `out` more often (atomics count).
    `coalesced`: neighbouring threads along x make their n-th access to a global array, on one line,
    at neighbouring elements (or the same one)."""
    out = trace.global_array("out") or next((a for a in trace.arrays if a.space == GLOBAL), None)
    if out is None:
        return []
    failures = []
    if require.get("shared"):
        failures += _shared_use(trace, config, out, require["shared"] == "from_other_threads")
    if require.get("out_cell_writes_per_block") is not None:
        failures += _writes_per_block(trace, config, out, int(require["out_cell_writes_per_block"]))
    if require.get("coalesced"):
        failures += _coalescing(trace, config)
    return failures


def unshareable_blocks(trace: Trace, out) -> set[int]:
    """The blocks where threads cannot share their work, so the rule "read what another thread
    wrote" cannot apply: a block of one thread, or one whose threads together read at most one
    element of each input (a dot product of size 1, a matrix of one cell, the last block of a
    ragged size holding one element). It is decided by the config's data, which every correct
    kernel reads, not by the kernel's choices: a kernel that lets one thread do all the work of a
    block with many elements is still judged."""
    tpb = trace.threads_per_block
    if tpb < 2:
        return {e[0] // max(tpb, 1) for e in trace.events}
    spaces = [a.space for a in trace.arrays]
    cells: dict = {}  # (block, aid) -> the input cells the block read
    blocks = set()
    for e in trace.events:
        blocks.add(e[0] // tpb)
        if e[1] == READ and spaces[e[2]] == GLOBAL and e[2] != out.aid:
            cells.setdefault((e[0] // tpb, e[2]), set()).add(e[3])
    most: dict = {}
    for (block, _), read in cells.items():
        most[block] = max(most.get(block, 0), len(read))
    return {b for b in blocks if most.get(b, 0) < 2}


def unjudged(trace: Trace, config: str, require: dict | None) -> list[str]:
    """The notes a verdict carries for the rules a config gave no chance to apply."""
    if not require or require.get("shared") != "from_other_threads":
        return []
    out = trace.global_array("out") or next((a for a in trace.arrays if a.space == GLOBAL), None)
    if out is None:
        return []
    idle = unshareable_blocks(trace, out)
    if not idle:
        return []
    every = len(idle) == len({e[0] // max(trace.threads_per_block, 1) for e in trace.events})
    where = f"in config '{config}'" if every else f"for {len(idle)} block(s) of config '{config}'"
    return [f"the rule \"read shared cells other threads wrote\" was not judged {where}: there, a block's "
            "threads together read at most one element of each input, so there is nothing to share"]


def _shared_use(trace: Trace, config: str, out, from_others: bool) -> list[Failure]:
    spaces = [a.space for a in trace.arrays]
    tpb = trace.threads_per_block
    idle = unshareable_blocks(trace, out) if from_others else set()
    written: dict = {}  # shared (aid, flat) -> [phase of its first write, that writer, first phase another wrote it]
    read_shared, crossed, shared_by_others = set(), set(), set()
    judged: set = set()
    bad: dict = {}  # reason -> [first write of out, threads]
    for e in trace.events:
        tid, op, aid = e[0], e[1], e[2]
        if spaces[aid] == SHARED:
            key = (aid, e[3])
            if op == WRITE or op == ATOMIC:
                rec = written.get(key)
                if rec is None:
                    written[key] = [e[6], tid, None]
                elif rec[2] is None and tid != rec[1]:
                    rec[2] = e[6]  # a block's events come phase by phase: the first is the earliest
            elif op == READ:
                read_shared.add(tid)
                rec = written.get(key)
                if rec is not None and rec[0] < e[6]:
                    crossed.add(tid)
                    if rec[1] != tid or (rec[2] is not None and rec[2] < e[6]):
                        shared_by_others.add(tid)
        elif aid == out.aid and (op == WRITE or op == ATOMIC) and tid not in judged:
            judged.add(tid)
            if idle and tid // tpb in idle:
                continue
            if tid not in read_shared:
                reason = "none"
            elif tid not in crossed:
                reason = "same_phase"
            elif from_others and tid not in shared_by_others:
                reason = "own"
            else:
                continue
            bad.setdefault(reason, [e, 0])[1] += 1
    failures = []
    for reason, (e, threads) in bad.items():
        block, thread = trace.where(e[0])
        more = f" {threads - 1} other thread(s) did the same." if threads > 1 else ""
        head = f"{_who(trace, e[0]).capitalize()} writes {_cell(trace, e[2], e[3])} on line {e[5]}"
        if reason == "none":
            said = (f"{head}, but it read nothing from shared memory before that.{more} The answer may be "
                    f"right, but it skips the point. {PASS_THROUGH_SHARED}")
        elif reason == "same_phase":
            said = (f"{head}, but every shared cell it read before that was written in the same barrier "
                    f"phase: no cuda.syncthreads() stood between the write and the read.{more} "
                    f"{PASS_THROUGH_SHARED}")
        else:
            said = (f"{head}, but after the barrier it read only shared cells it had written itself.{more} "
                    "This puzzle is about threads sharing their work: after the barrier, read the cells "
                    "that the other threads of the block wrote.")
        failures.append(Failure(
            kind="technique_missing", message=said, config=config, array=out.name,
            index=_index(trace, e[2], e[3]), block=block, thread=thread, line=e[5], count=threads,
            details=[{"requirement": "shared", "why": reason}]))
    return failures


def _writes_per_block(trace: Trace, config: str, out, limit: int) -> list[Failure]:
    tpb = trace.threads_per_block
    writes: dict = {}  # (block, flat) -> the writing events
    for e in trace.events:
        if e[2] == out.aid and (e[1] == WRITE or e[1] == ATOMIC):
            writes.setdefault((e[0] // tpb, e[3]), []).append(e)
    over = [evs for evs in writes.values() if len(evs) > limit]
    if not over:
        return []
    evs = over[0]
    first = evs[0]
    block, thread = trace.where(first[0])
    threads = list(dict.fromkeys(e[0] for e in evs))
    named = ", ".join(fmt_dim(trace.where(t)[1]) for t in threads[:6]) + (", ..." if len(threads) > 6 else "")
    lines = sorted({e[5] for e in evs if e[5] is not None})
    on = f"line {lines[0]}" if len(lines) == 1 else "lines " + ", ".join(str(n) for n in lines)
    times = "once" if limit == 1 else f"at most {limit} times"
    others = f" {len(over) - 1} other cell(s) are written too often as well." if len(over) > 1 else ""
    return [Failure(
        kind="technique_missing",
        message=(f"Block {fmt_dim(block)} writes {_cell(trace, out.aid, first[3])} {len(evs)} times (thread(s) "
                 f"{named}, on {on}); this puzzle asks each block to write each cell of {out.name} {times} "
                 f"(an atomic counts as a write).{others} The answer may be right, but the point is to "
                 f"combine the block's values inside the block first, then let one thread write the result."),
        config=config, array=out.name, index=_index(trace, out.aid, first[3]), block=block, thread=thread,
        line=first[5], count=len(over),
        details=[{"requirement": "out_cell_writes_per_block", "limit": limit, "used": len(evs)}])]


def _coalescing(trace: Trace, config: str) -> list[Failure]:
    spaces = [a.space for a in trace.arrays]
    per_thread: dict = {}  # (tid, aid, line) -> flat indices in order
    for e in trace.events:
        if (e[1] == READ or e[1] == WRITE or e[1] == ATOMIC) and spaces[e[2]] == GLOBAL:
            per_thread.setdefault((e[0], e[2], e[5]), []).append(e)
    bx = trace.block[0]
    found: dict = {}  # (aid, line) -> [first pair, count of pairs]
    for (tid, aid, line), evs in per_thread.items():
        if tid % trace.threads_per_block % bx == bx - 1:
            continue  # the last thread of its row has no neighbour along x
        right = per_thread.get((tid + 1, aid, line))
        if right is None:
            continue
        for a, b in zip(evs, right):
            if abs(b[3] - a[3]) > 1:
                rec = found.get((aid, line))
                if rec is None:
                    found[(aid, line)] = [(a, b), 1]
                else:
                    rec[1] += 1
                break
    failures = []
    for (aid, line), ((a, b), count) in found.items():
        info = trace.arrays[aid]
        block, thread = trace.where(a[0])
        _, other = trace.where(b[0])
        verb = "read" if a[1] == READ else "write"
        more = f" {count - 1} other pair(s) of neighbours did the same." if count > 1 else ""
        failures.append(Failure(
            kind="technique_missing",
            message=(f"Threads {fmt_dim(thread)} and {fmt_dim(other)} of block {fmt_dim(block)}, neighbours along "
                     f"x, {verb} {_cell(trace, aid, a[3])} and {_cell(trace, aid, b[3])} on line {line}: "
                     f"{abs(b[3] - a[3])} elements apart in memory.{more} This puzzle practises coalescing: "
                     f"neighbouring threads of a warp should touch neighbouring elements, when they read and "
                     f"when they write. Let threadIdx.x run along the last index of {info.name}, and where the "
                     f"data must change places, let it do so in shared memory."),
            config=config, array=info.name, index=_index(trace, aid, a[3]), block=block, thread=thread,
            other_thread=other, line=line, count=count, details=[{"requirement": "coalesced"}]))
    return failures


# -- output ----------------------------------------------------------------------------------------
def bad_cells(expected: np.ndarray, got: np.ndarray, rtol: float, atol: float | None = None) -> np.ndarray | None:
    """The one rule for a wrong cell, for a puzzle's verdict, its grid and a coaching task's
    verdict alike: not within `atol + rtol * |answer|` of the answer, or not finite. A puzzle's
    tolerance is one number, both relative and absolute (atol None). None when the shapes differ."""
    if np.shape(expected) != np.shape(got):
        return None
    val = np.asarray(got, dtype=np.float64)
    return ~(np.isclose(val, np.asarray(expected, dtype=np.float64), rtol=rtol, atol=rtol if atol is None else atol)
             & np.isfinite(val))


def wrong_output(trace: Trace | None, config: str, expected: np.ndarray, got: np.ndarray,
                 tolerance: float, out_name: str = "out") -> list[Failure]:
    if expected.shape != got.shape:
        return [Failure(kind="wrong_output", config=config, array=out_name,
                        message=f"{out_name} has shape {got.shape} but the answer has shape {expected.shape}.")]
    exp = expected.astype(np.float64)
    val = got.astype(np.float64)
    ok = ~bad_cells(expected, got, tolerance)
    if ok.all():
        return []
    writers = {}
    aid = None
    if trace is not None:
        info = trace.global_array(out_name)
        aid = info.aid if info else None
        for e in trace.events:
            if e[2] == aid and (e[1] == WRITE or e[1] == ATOMIC):
                writers[e[3]] = e
    bad = np.argwhere(~ok)
    details = []
    for idx in bad[:MAX_DETAILS]:
        idx = tuple(int(i) for i in idx)
        flat = int(np.ravel_multi_index(idx, got.shape)) if got.ndim else 0
        cell = {"index": list(idx), "expected": _num(exp[idx]), "got": _num(val[idx])}
        e = writers.get(flat)
        if e is not None:
            block, thread = trace.where(e[0])
            cell.update(block=list(block), thread=list(thread), line=e[5])
        elif trace is not None:
            cell["unwritten"] = True
        details.append(cell)
    first = details[0]
    idx_s = ", ".join(str(i) for i in first["index"])
    msg = f"{out_name}[{idx_s}] is {_fmt(first['got'])} but should be {_fmt(first['expected'])}"
    if "thread" in first:
        msg += (f"; thread {fmt_dim(tuple(first['thread']))} of block {fmt_dim(tuple(first['block']))} "
                f"wrote it on line {first['line']}.")
    elif first.get("unwritten"):
        msg += "; no thread wrote it (it still holds its starting value)."
    else:
        msg += "."
    more = len(bad) - 1
    if more:
        unwritten = sum(1 for d in details if d.get("unwritten"))
        msg += f" {more} more cell(s) are wrong"
        msg += f"; {unwritten} cells in all were never written." if unwritten > 1 else "."
    if first.get("unwritten"):
        msg += " Is some thread responsible for every cell of the output?"
    return [Failure(kind="wrong_output", message=msg, config=config, array=out_name,
                    index=tuple(first["index"]),
                    block=tuple(first["block"]) if "block" in first else None,
                    thread=tuple(first["thread"]) if "thread" in first else None,
                    line=first.get("line"), count=len(bad), details=details)]


def _num(x):
    x = float(x)
    return x if np.isfinite(x) else str(x)


def _fmt(x):
    if isinstance(x, str):
        return x
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.6g}"


__all__ = ["find_all", "bad_cells", "out_of_bounds", "races", "racing_threads", "uninitialized_reads", "budgets",
           "requirements", "wrong_output", "LOCAL"]
