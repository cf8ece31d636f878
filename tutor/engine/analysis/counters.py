"""Nsight Compute's memory counters, computed from the simulator's trace.

A GPU executes a warp's 32 lanes together: one memory instruction of a warp is one request, and
the hardware serves it in 32-byte sectors (global memory) or in wavefronts over 32 banks of 4
bytes (shared memory). The trace holds every lane's access, so the same counts follow from it.
A warp's request is its lanes' accesses made by the same source line, to the same array, with the
same operation, in the same barrier phase and warp phase, at the same count of executions of that
line there: the k-th time each lane ran the line since the last barrier and syncwarp, as lockstep
execution would have them together. Lanes that skipped the line (a branch) are not in its request, which is what
divergence costs; lanes that ran it in different barrier phases ran it in different instructions.
Beside the requests, the launch's totals against what its data needs (Counters.needed_*): the
sectors that hold the global elements it loaded and stored, and the wavefronts its shared accesses
need at the least. A request split over lines or branches is cheap one piece at a time and costs
the same or more in these totals.

Names follow ncu's metrics, so a learner who opens ncu later reads the same words:
- global loads and stores: requests (l1tex__t_requests_pipe_lsu_mem_global_op_ld/st.sum),
  sectors (l1tex__t_sectors_pipe_lsu_mem_global_op_ld/st.sum), sectors per request, and the
  ideal: the sectors the bytes the warp asked for would fill if they were contiguous;
- shared loads and stores: bank conflicts as extra wavefronts
  (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld/st.sum): per request, the most distinct
  4-byte words any one bank must serve, less one (lanes reading the same word do not conflict);
  a shared atomic's lanes on one word are served one after another, so for atomics every lane
  counts, the same word or not;
- atomics: operations, and the most lanes of one request on one address;
- active lanes per memory request (smsp__thread_inst_executed_per_inst_executed, counted over
  memory instructions only: the trace does not see arithmetic).
What a trace cannot know is said, not guessed: caches and L2 hit rates, timing, registers.
Arrays are taken as 256-byte aligned, as CUDA allocates them (a slice or a view may not be).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from functools import lru_cache

from ..trace import ATOMIC, GLOBAL, READ, SHARED, UNINIT_READ, WRITE, Trace
from tutor.plural import counted, plural

WARP = 32
SECTOR = 32
BANKS = 32
BANK_BYTES = 4

_OPS = {READ: "ld", UNINIT_READ: "ld", WRITE: "st", ATOMIC: "atom"}
MARK_KINDS = ("uncoalesced", "conflicted", "divergent")  # why a line costs (Counters.mark_kinds), worst first

NOT_MODELLED = ("caches and L2 hit rates, timing and registers are not modelled: the trace holds "
                "accesses, not the memory system")


# Requests are grouped by each lane's k-th execution of a line in a barrier phase. That is the
# hardware's grouping while a lane's executions are the first iterations of its loop (a
# reduction's `if t < s`, a ragged trip count); a lane that skips an iteration in the middle (a
# `continue`) is grouped with the others' next iteration, where the GPU issues one request per
# iteration any lane is in: attention_document's naive kernel measures 219 load requests here and
# 379 under ncu, with the same sectors (379 is its 9 iterations' loads, counted by hand). Lines
# after a `continue` are said to be approximate; an `if` that skips middle iterations is not seen.
UNEVEN = ("line(s) {lines} follow a `continue`: where the lanes of a warp skip different iterations, the GPU "
          "issues one request per iteration any lane is in, so more requests than counted here (the "
          "sectors stay the same)")


@lru_cache(maxsize=64)
def itemsize(dtype: str) -> int:
    """Bytes per element of a trace array's dtype name (4 where the name is not numpy's)."""
    import numpy as np

    try:
        return int(np.dtype(str(dtype)).itemsize) or 4
    except (TypeError, ValueError):
        return 4


def units(flats, size: int, unit: int) -> set:
    """The `unit`-byte pieces (32-byte sectors, 4-byte bank words, 128-byte lines) that elements of
    `size` bytes at these flat indices cover: an element can span two, unless it divides the unit."""
    if size <= unit and unit % size == 0:
        per = unit // size
        return {f // per for f in flats}
    return {u for f in flats for u in range((f * size) // unit, ((f + 1) * size - 1) // unit + 1)}


def bank_wavefronts(flats, size: int) -> int:
    """A shared request's wavefronts: the most distinct 4-byte words any one bank must serve
    (lanes reading the same word do not conflict); 1 for a request of no word."""
    per_bank: dict = defaultdict(int)
    for word in units(flats, size, BANK_BYTES):
        per_bank[word % BANKS] += 1
    return max(per_bank.values(), default=1)


def atomic_wavefronts(flats: list, size: int) -> int:
    """A shared atomic request's wavefronts: the most lane updates any one bank must serve. Lanes
    that update one word are served one after another, unlike lanes that read it: each counts."""
    per_bank: dict = defaultdict(int)
    for flat in flats:
        for word in units((flat,), size, BANK_BYTES):
            per_bank[word % BANKS] += 1
    return max(per_bank.values(), default=1)


@dataclass
class LineCounters:
    """One source line's requests in one memory space and one operation ("ld", "st", "atom")."""

    line: int | None
    space: str
    op: str
    array: str
    requests: int = 0
    sectors: int = 0          # global: 32-byte sectors touched, summed over requests
    ideal_sectors: int = 0    # global: what the same bytes would need, contiguous and aligned
    wavefronts: int = 0       # shared: summed over requests; a conflict-free request is one
    lanes: int = 0            # active lanes, summed over requests
    same_address: int = 0     # atomics: the most lanes of one request on one address
    # its share of what the launch's data needs (Counters.needed_*): global, the sectors no earlier
    # request of the launch had fetched (loads and atomics together; stores apart); shared, the
    # wavefronts of its requests that the busiest lane of their warp needed (count explains)
    needed: int = 0

    @property
    def sectors_per_request(self) -> float:
        return self.sectors / self.requests if self.requests else 0.0

    @property
    def bank_conflicts(self) -> int:
        return self.wavefronts - self.requests if self.space == SHARED else 0

    @property
    def lanes_per_request(self) -> float:
        return self.lanes / self.requests if self.requests else 0.0

    @property
    def efficiency(self) -> float | None:
        """Global: ideal sectors over the sectors served (1.0 is perfectly coalesced)."""
        return self.ideal_sectors / self.sectors if self.space == GLOBAL and self.sectors else None

    def to_json(self) -> dict:
        return {**asdict(self), "sectors_per_request": round(self.sectors_per_request, 3),
                "bank_conflicts": self.bank_conflicts, "lanes_per_request": round(self.lanes_per_request, 3),
                "efficiency": None if self.efficiency is None else round(self.efficiency, 3)}


@dataclass
class Counters:
    """One launch's counters: the kernel's totals by ncu's names, and the lines they come from."""

    lines: list[LineCounters] = field(default_factory=list)
    notes: list[str] = field(default_factory=lambda: [NOT_MODELLED])
    threads_per_block: int = 0  # 0: not known (no lane is then called idle)
    # The launch's totals against its data: what [perf] targets judge, so that a request split over
    # lines or branches never looks cheaper than the whole request.
    needed_load_sectors: int = 0   # the 32-byte sectors holding the global elements loaded (atomics too)
    needed_store_sectors: int = 0  # the same for the elements stored (atomics too)
    needed_wavefronts: int = 0     # shared: per warp, barrier phase, array and operation, the most accesses of one lane
    hot_address: int = 0           # the most global atomics one block made on one address
    hot_line: int | None = None    # the line that made most of those

    def total(self, space: str, op: str, what: str) -> int:
        return sum(getattr(c, what) for c in self.lines if c.space == space and c.op == op)

    def metrics(self) -> dict:
        """The kernel's counters under Nsight Compute's metric names."""
        out = {}
        for tag in ("ld", "st"):
            out[f"l1tex__t_requests_pipe_lsu_mem_global_op_{tag}.sum"] = self.total(GLOBAL, tag, "requests")
            out[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{tag}.sum"] = self.total(GLOBAL, tag, "sectors")
            out[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{tag}.sum"] = self.total(SHARED, tag,
                                                                                           "bank_conflicts")
        requests = sum(c.requests for c in self.lines)
        out["smsp__thread_inst_executed_per_inst_executed.ratio (memory instructions)"] = \
            round(sum(c.lanes for c in self.lines) / requests, 3) if requests else None
        out["atomics"] = sum(c.lanes for c in self.lines if c.op == "atom")
        return out

    def ranked(self) -> list[LineCounters]:
        """Lines by cost: sectors above the ideal, then conflicts, then requests."""
        return sorted(self.lines, key=lambda c: (-(c.sectors - c.ideal_sectors), -c.bank_conflicts, -c.requests,
                                                 c.line or 0))

    def to_json(self) -> dict:
        return {"metrics": self.metrics(), "lines": [c.to_json() for c in self.ranked()], "notes": list(self.notes),
                "threads_per_block": self.threads_per_block, "needs": self.needs()}

    def needs(self) -> dict:
        """The launch's totals against what its data needs (the fields above, by name)."""
        return {name: getattr(self, name) for name in _NEEDS}

    @classmethod
    def from_json(cls, d: dict) -> "Counters":
        """Back from to_json, every field checked for its type: a child's answer is not trusted."""
        whole = ("requests", "sectors", "ideal_sectors", "wavefronts", "lanes", "same_address")
        lines = []
        for c in d["lines"][:512]:
            if not (c["line"] is None or type(c["line"]) is int) or any(type(c[k]) is not int for k in whole) \
                    or type(c.get("needed", 0)) is not int:
                raise ValueError("a line's counters are not whole numbers")
            lines.append(LineCounters(c["line"], str(c["space"])[:16], str(c["op"])[:8], str(c["array"])[:64],
                                      **{k: c[k] for k in whole}, needed=c.get("needed", 0)))
        notes = [str(n)[:400] for n in d.get("notes", [])[:8]]
        tpb = d.get("threads_per_block", 0)
        needs = d.get("needs") if isinstance(d.get("needs"), dict) else {}
        if any(type(needs.get(k, 0)) is not int for k in _NEEDS if k != "hot_line") or \
                not (needs.get("hot_line") is None or type(needs["hot_line"]) is int):
            raise ValueError("the launch's totals are not whole numbers")
        return cls(lines, notes or [NOT_MODELLED], threads_per_block=tpb if type(tpb) is int else 0,
                   **{k: needs[k] for k in _NEEDS if k in needs})

    def summary(self, most: int = 3) -> dict:
        """What a verdict carries: the kernel's metrics, its costliest lines, every line's marks."""
        out = {"metrics": self.metrics(), "lines": [c.to_json() for c in self.ranked()[:most] if c.requests],
               "marks": self.marks()}
        if self.notes[1:]:
            out["notes"] = self.notes[1:]  # what makes this launch's counts approximate
        return out

    def marks(self) -> list[dict]:
        """What the editor marks beside each costly line: {line, kind, text}, one per line and kind
        (see mark_kinds), most costly kind first."""
        found: dict = {}
        for c in self.lines:
            if not isinstance(c.line, int):
                continue
            what = f"{ACCESS_NAMES.get((c.space, c.op), c.op)} of {c.array}"
            for kind in self.mark_kinds(c):
                text = (f"{c.sectors_per_request:.1f} sectors per request (ideal {c.ideal_sectors / c.requests:.1f})"
                        if kind == "uncoalesced" else
                        (f"{counted(c.bank_conflicts, 'extra wavefront')} over {counted(c.requests, 'request')} "
                         "(lanes updating one word or bank wait their turn)" if c.op == "atom" else
                         f"{counted(c.bank_conflicts, 'bank conflict')} over {counted(c.requests, 'request')}")
                        if kind == "conflicted" else
                        f"{c.lanes_per_request:.1f} of {self._warp_width():g} lanes active per request")
                found.setdefault((c.line, kind), []).append(f"{what}: {text}")
        order = sorted(found, key=lambda key: (key[0], MARK_KINDS.index(key[1])))
        return [{"line": line, "kind": kind, "text": "; ".join(found[line, kind])} for line, kind in order]

    def mark_kinds(self, c: LineCounters) -> list[str]:
        """Why one line's accesses cost, in MARK_KINDS' order: "uncoalesced" (more sectors than the
        bytes need), "conflicted" (shared bank conflicts), "divergent" (an eighth or more of the
        warps' lanes idle on it, on average; a ragged grid's last warp idling a few lanes on a
        guarded line is not worth a mark). Lanes are judged only in blocks of at least a warp: a
        block of 8 threads is its warp's 8 lanes, all of them busy."""
        if not c.requests:
            return []
        width = self._warp_width()
        kinds = []
        if c.space == GLOBAL and c.sectors > c.ideal_sectors:
            kinds.append("uncoalesced")
        if c.bank_conflicts > 0:
            kinds.append("conflicted")
        if width and c.lanes_per_request <= width * 7 / 8:
            kinds.append("divergent")
        return kinds

    def _warp_width(self) -> float:
        """The lanes a warp of the block holds, on average (0: a block smaller than a warp, or unknown)."""
        tpb = self.threads_per_block
        return tpb / -(-tpb // WARP) if tpb >= WARP else 0


def count(trace: Trace, source: str | None = None) -> Counters:
    """The counters of one traced launch (global and shared memory; local and constant memory are
    not counted). With the kernel's `source`, an if/else whose two branches store to the same
    target counts as one store instruction, as Numba's compiler emits it (a select, then one store):
    matmul_tiled's zero-filled tiles measure so on the H200."""
    arrays = trace.arrays
    lines: dict = {}
    needs = _Needs()
    for (block, warp, line, op, aid, phase, _, _), accesses in requests(trace, source).items():
        info = arrays[aid]
        c = lines.get((line, info.space, op, info.name))
        if c is None:
            c = lines[(line, info.space, op, info.name)] = LineCounters(line, info.space, op, info.name)
        _add_request(c, info, accesses)
        needs.add(c, (block, warp, phase), aid, info, accesses)
    counters = Counters(sorted(lines.values(), key=lambda c: (c.line or 0, c.space, c.op, c.array)),
                        threads_per_block=trace.threads_per_block)
    needs.settle(counters)
    after = _after_continue(source) if source else frozenset()
    uneven = sorted({c.line for c in counters.lines if c.requests} & after)
    if uneven:
        counters.notes.append(UNEVEN.format(lines=", ".join(map(str, uneven))))
    return counters


def requests(trace: Trace, source: str | None = None) -> dict:
    """Every warp request of the launch, in the order of its first access:
    (block, warp, line, kind, aid, phase, wphase, k) -> [(lane, flat index)], k counting each lane's
    runs of the line within the barrier phase and the warp phase (the syncwarps it has passed)."""
    arrays = trace.arrays
    same = _one_store_for_both_branches(source) if source else {}
    tpb = trace.threads_per_block
    counted = [a.space in (GLOBAL, SHARED) for a in arrays]
    ops = _OPS  # out-of-bounds accesses are not in it: the GPU would not have served them
    seen: dict = {}     # (tid, line, op, aid, phase) -> times this thread has made this access in the phase
    groups: dict = {}   # (block, warp, line, op, aid, phase, k) -> [(lane, flat)]
    for tid, op, aid, flat, _, line, phase, wphase in trace.events:
        kind = ops.get(op)
        if kind is None or not counted[aid] or type(flat) is not int:
            continue
        if same and kind == "st" and line in same:
            line = same[line]
        # A lane's k-th run of the line counts within its warp phase too: lanes that passed a
        # different number of syncwarps ran it in different instructions (a chain of steps with
        # one lane working in each is as many requests as steps, not one).
        key = (tid, line, op, aid, phase, wphase)
        k = seen.get(key, 0)
        seen[key] = k + 1
        t = tid % tpb
        group = (tid // tpb, t >> 5, line, kind, aid, phase, wphase, k)  # block, warp (32 lanes), line, kind, array
        accesses = groups.get(group)
        if accesses is None:
            groups[group] = [(t & 31, flat)]
        else:
            accesses.append((t & 31, flat))
    return groups


def line_detail(trace: Trace, line: int, source: str | None = None) -> list[str]:
    """The costliest request of each array and kind on `line`, lane by lane: which 32-byte sectors
    (global) or which banks (shared) the warp's lanes touched, so the learner sees why it costs."""
    worst: dict = {}
    for (block, warp, ln, kind, aid, phase, wphase, k), accesses in requests(trace, source).items():
        if ln != line:
            continue
        info = trace.arrays[aid]
        cost = _request_cost(info, accesses, kind)
        best = worst.get((info.name, info.space, kind))
        if best is None or cost > best[0]:
            worst[(info.name, info.space, kind)] = (cost, block, warp, phase, wphase, k, info, accesses)
    out = []
    for (name, space, kind), (cost, block, warp, phase, wphase, k, info, accesses) in sorted(worst.items()):
        size = itemsize(info.dtype)
        origin = trace.block_of(block * trace.threads_per_block)[:trace.grid_nd]
        after = f" after {phase} barrier{'s' if phase > 1 else ''}" if phase else ""
        after += f" and {wphase} syncwarp{'s' if wphase > 1 else ''}" if phase and wphase else \
            f" after {wphase} syncwarp{'s' if wphase > 1 else ''}" if wphase else ""
        where = (f"{ACCESS_NAMES.get((space, kind), kind)} of {name}, warp {warp} of block {origin}, "
                 f"execution {k + 1} of the line{after}")
        by: dict = defaultdict(list)
        if space == GLOBAL:
            for lane, flat in sorted(accesses):
                for sector in units((flat,), size, SECTOR):
                    by[sector].append(lane)
            parts = [f"sector {unit}: {_lanes(lanes)}" for unit, lanes in sorted(by.items())]
            out.append(f"{where}: {counted(cost, 'sector')} for {counted(len(accesses), 'lane')}")
        else:
            words: dict = defaultdict(set)
            for lane, flat in sorted(accesses):
                for word in units((flat,), size, BANK_BYTES):
                    by[word % BANKS].append(lane)
                    words[word % BANKS].add(word)
            parts = [f"bank {bank}: {_lanes(lanes)}" + (f"; {len(words[bank])} different words" if len(words[bank]) > 1
                                                         else "") for bank, lanes in sorted(by.items())]
            out.append(f"{where}: {counted(cost, 'wavefront')}")
        out += [f"  {p}" for p in parts]
    return out


def _request_cost(info, accesses, kind: str = "") -> int:
    """A request's sectors (global) or wavefronts (shared): what ncu counts for it. A shared
    atomic's lanes on one word are served one after another (atomic_wavefronts)."""
    size, flats = itemsize(info.dtype), {f for _, f in accesses}
    if info.space == GLOBAL:
        return len(units(flats, size, SECTOR))
    if kind == "atom":
        return atomic_wavefronts([f for _, f in accesses], size)
    return bank_wavefronts(flats, size)


_NEEDS = ("needed_load_sectors", "needed_store_sectors", "needed_wavefronts", "hot_address", "hot_line")


class _Needs:
    """What the launch's data needs, gathered request by request (count's helper).

    Global: a sector that no earlier request fetched is needed, one fetched again is not; loads and
    stores apart, an atomic in both (it reads and writes). Shared: a warp's accesses to an array
    with one operation in one barrier phase need as many wavefronts as its busiest lane made
    accesses there, one instruction each with no conflict; the requests with the most lanes are
    taken as the needed ones, for the lines' shares. (Across barrier phases a warp's instructions
    cannot merge: what a kernel spends on more phases than its data needs shows in its requests
    and its lanes per request, not here.) Atomics: how many each block made on each global address."""

    def __init__(self):
        self.fetched = {"ld": set(), "st": set()}   # (aid, sector) fetched so far
        self.totals = {"ld": 0, "st": 0}
        self.shared: dict = defaultdict(list)         # (block, warp, phase, aid, kind) -> [(line counters, lanes)]
        self.atomics: dict = defaultdict(int)         # (block, aid, flat) -> global atomics
        self.atomic_lines: dict = defaultdict(lambda: defaultdict(int))  # (block, aid, flat) -> line -> atomics

    def add(self, c: LineCounters, where: tuple, aid: int, info, accesses: list) -> None:
        """One request: `where` is its (block, warp, barrier phase)."""
        if info.space != GLOBAL:
            self.shared[(*where, aid, c.op)].append((c, {lane for lane, _ in accesses}))
            return
        block = where[0]
        sectors = units({f for _, f in accesses}, itemsize(info.dtype), SECTOR)
        for cls in (("ld", "st") if c.op == "atom" else (c.op,)):
            fresh = {s for s in sectors if (aid, s) not in self.fetched[cls]}
            self.fetched[cls].update((aid, s) for s in fresh)
            self.totals[cls] += len(fresh)
            if cls == c.op or cls == "ld":  # an atomic line's share is counted as a load's
                c.needed += len(fresh)
        if c.op == "atom":
            for _, flat in accesses:
                self.atomics[(block, aid, flat)] += 1
                self.atomic_lines[(block, aid, flat)][c.line] += 1

    def settle(self, counters: Counters) -> None:
        counters.needed_load_sectors, counters.needed_store_sectors = self.totals["ld"], self.totals["st"]
        for members in self.shared.values():
            per_lane: dict = defaultdict(int)
            for _, lanes in members:
                for lane in lanes:
                    per_lane[lane] += 1
            need = max(per_lane.values())
            counters.needed_wavefronts += need
            for c, _ in sorted(members, key=lambda m: -len(m[1]))[:need]:  # stable: first requests first
                c.needed += 1
        if self.atomics:
            hot = max(self.atomics, key=self.atomics.get)
            counters.hot_address = self.atomics[hot]
            lines = self.atomic_lines[hot]
            counters.hot_line = max(lines, key=lines.get)


def _lanes(lanes: list[int]) -> str:
    """"lane 3", "lanes 0-3, 8, 12-15": runs of consecutive lanes."""
    runs, start, prev = [], None, None
    for lane in sorted(set(lanes)):
        if start is None:
            start = prev = lane
        elif lane == prev + 1:
            prev = lane
        else:
            runs.append(f"{start}-{prev}" if prev > start else str(start))
            start = prev = lane
    if start is not None:
        runs.append(f"{start}-{prev}" if prev > start else str(start))
    return ("lane " if runs == [str(start)] else "lanes ") + ", ".join(runs)


@lru_cache(maxsize=16)
def _after_continue(source: str) -> frozenset:
    """Lines of a loop body that follow a `continue` in it (at any depth, outside inner loops).
    Cached: every config of a check counts the same source."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    lines: set = set()
    for loop in ast.walk(tree):
        if not isinstance(loop, (ast.For, ast.While)):
            continue
        skips = [n.lineno for n in _own_statements(loop.body) if isinstance(n, ast.Continue)]
        if skips:
            last = max(getattr(n, "end_lineno", n.lineno) for n in loop.body)
            lines.update(range(min(skips) + 1, last + 1))
    return frozenset(lines)


def _own_statements(body: list):
    """The statements of a loop body, nested ifs included, inner loops' bodies not."""
    import ast

    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.With, ast.Try)):
            for field_name in ("body", "orelse", "finalbody", "handlers"):
                yield from _own_statements(getattr(node, field_name, []) or [])
        elif isinstance(node, ast.ExceptHandler):
            yield from _own_statements(node.body)


@lru_cache(maxsize=16)
def _one_store_for_both_branches(source: str) -> dict:
    """{line of the else branch's store: line of the if branch's store} for every `if c: x[i] = a`
    `else: x[i] = b` (one statement each, the same target): both are one store instruction.
    Cached (read, never changed, by its callers): every config and view counts the same source."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    pairs = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and len(node.body) == 1 and len(node.orelse) == 1:
            a, b = node.body[0], node.orelse[0]
            if (isinstance(a, ast.Assign) and isinstance(b, ast.Assign) and len(a.targets) == len(b.targets) == 1
                    and isinstance(a.targets[0], ast.Subscript)
                    and ast.dump(a.targets[0]) == ast.dump(b.targets[0])):
                pairs[b.lineno] = a.lineno
    return pairs


def _add_request(c: LineCounters, info, accesses: list) -> None:
    c.requests += 1
    c.lanes += len({lane for lane, _ in accesses})
    if info.space == GLOBAL:
        c.sectors += _request_cost(info, accesses)
        c.ideal_sectors += -(-len({flat for _, flat in accesses}) * itemsize(info.dtype) // SECTOR)
    else:
        c.wavefronts += _request_cost(info, accesses, c.op)
    if c.op == "atom":
        per_address: dict = defaultdict(int)
        for _, f in accesses:
            per_address[f] += 1
        c.same_address = max(c.same_address, max(per_address.values()))


ACCESS_NAMES = {("global", "ld"): "global load", ("global", "st"): "global store", ("global", "atom"): "global atomic",
             ("shared", "ld"): "shared load", ("shared", "st"): "shared store", ("shared", "atom"): "shared atomic"}


def counters_text(c: Counters, source_lines: list[str], title: str = "", most: int = 8) -> str:
    """The kernel's table, then its lines by cost with the source beside them (ncu's source view)."""
    m = c.metrics()
    out = [title] if title else []
    for tag, what in (("ld", "loads"), ("st", "stores")):
        requests = m[f"l1tex__t_requests_pipe_lsu_mem_global_op_{tag}.sum"]
        sectors = m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{tag}.sum"]
        ideal = sum(x.ideal_sectors for x in c.lines if x.space == GLOBAL and x.op == tag)
        per = f"{sectors / requests:.1f}" if requests else "-"
        out.append(f"  global {what:<7} {requests:>7} {plural(requests, 'request'):<8} {sectors:>8} "
                   f"{plural(sectors, 'sector'):<7}  {per:>5} per request"
                   + (f"  (ideal {ideal}, {ideal / sectors:.0%} efficient)" if sectors else ""))
    for tag, what in (("ld", "loads"), ("st", "stores")):
        conflicts = m[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{tag}.sum"]
        requests = c.total(SHARED, tag, "requests")
        out.append(f"  shared {what:<7} {requests:>7} {plural(requests, 'request'):<8} {conflicts:>8} "
                   f"{plural(conflicts, 'bank conflict')} (extra wavefronts)")
    lanes = m["smsp__thread_inst_executed_per_inst_executed.ratio (memory instructions)"]
    out.append(f"  active lanes per memory request: {lanes if lanes is not None else '-'} of {WARP}")
    if m["atomics"]:
        worst = max(x.same_address for x in c.lines if x.op == "atom")
        out.append(f"  atomics: {m['atomics']}, up to {counted(worst, 'lane')} of one request on one address")
    ranked = [x for x in c.ranked() if x.requests][:most]
    if ranked:
        out += ["", "  lines by cost:"]
        for x in ranked:
            code = source_lines[x.line - 1].strip() if x.line and 0 < x.line <= len(source_lines) else ""
            if x.space == GLOBAL:
                cost = f"{x.sectors_per_request:.1f} sectors/request (ideal {x.ideal_sectors / x.requests:.1f})"
            else:
                cost = counted(x.bank_conflicts, "bank conflict")
            out.append(f"  line {x.line or '?':>3}  {ACCESS_NAMES.get((x.space, x.op), x.op):<14} {x.array:<8} "
                       f"{x.requests:>6} req  {cost}, {x.lanes_per_request:.0f} lanes  | {code}")
    out += ["", "  " + "; ".join(c.notes) + "."]
    return "\n".join(out)


def advice(summary, source_lines: list[str], most: int = 3) -> list[str]:
    """The costly lines of a verdict's counters (ConfigResult.counters) in words, for a model's
    prompt: "line 14 (`out[j, i] = a[i, j]`): global store, 32.0 sectors per request, 8x the
    ideal". The summary came from the child that ran the kernel: anything not shaped as ours is
    skipped."""
    out = []
    lines = summary.get("lines") if isinstance(summary, dict) else None
    for x in lines if isinstance(lines, list) else []:
        if len(out) >= most or not isinstance(x, dict):
            continue
        try:
            line, space, op = x.get("line"), str(x["space"]), str(x["op"])
            requests = int(x["requests"])
            where = f"line {int(line)}" if isinstance(line, int) else "a line"
        except (KeyError, TypeError, ValueError):
            continue
        code = source_lines[line - 1].strip()[:80] if isinstance(line, int) and 0 < line <= len(source_lines) else ""
        what = ACCESS_NAMES.get((space, op), op)
        head = f"{where} (`{code}`): {what}" if code else f"{where}: {what}"
        if space == GLOBAL:
            sectors, ideal = int(x.get("sectors", 0)), int(x.get("ideal_sectors", 0))
            if requests and ideal and sectors > ideal:
                out.append(f"{head}, {sectors / requests:.1f} sectors per request, {sectors / ideal:.1f}x the ideal")
        elif space == SHARED:
            conflicts = int(x.get("bank_conflicts", 0))
            if requests and conflicts:
                out.append(f"{head}, {counted(conflicts, 'bank conflict')} on {counted(requests, 'request')} "
                           f"({1 + conflicts / requests:.1f} wavefronts each)")
    return out


def verdict_advice(verdict, source_lines: list[str], most: int = 3) -> list[str]:
    """advice() for a verdict: its largest traced config's costliest lines (none on a GPU run)."""
    traced = [c for c in getattr(verdict, "configs", []) if isinstance(getattr(c, "counters", None), dict)]

    def weight(c) -> int:  # its costliest lines' requests
        lines = c.counters.get("lines")
        try:
            return sum(int(x.get("requests", 0)) for x in lines if isinstance(x, dict)) if isinstance(lines, list) else 0
        except (TypeError, ValueError):
            return 0

    return advice(max(traced, key=weight).counters, source_lines, most) if traced else []


def summary_text(summary, source_lines: list[str]) -> str:
    """A verdict's counters for one config (ConfigResult.counters) as the thread pane shows them:
    the kernel's figures, then its costliest lines in words. Anything not shaped as ours is left out."""
    metrics = summary.get("metrics") if isinstance(summary, dict) else None
    if not isinstance(metrics, dict):
        return "No memory counters for this config (a GPU run gives no trace to count)."

    def num(name):
        value = metrics.get(name)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0

    out = ["Memory counters (the simulator's trace, counted as Nsight Compute counts them):"]
    for tag, what in (("ld", "loads"), ("st", "stores")):
        requests = num(f"l1tex__t_requests_pipe_lsu_mem_global_op_{tag}.sum")
        sectors = num(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{tag}.sum")
        per = f", {sectors / requests:.1f} sectors per request" if requests else ""
        out.append(f"  global {what}: {counted(requests, 'request')}, {counted(sectors, 'sector')}{per}")
    for tag, what in (("ld", "loads"), ("st", "stores")):
        conflicts = num(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{tag}.sum")
        out.append(f"  shared {what}: {counted(conflicts, 'bank conflict')}")
    lanes = num("smsp__thread_inst_executed_per_inst_executed.ratio (memory instructions)")
    out.append(f"  active lanes per memory request: {lanes:g} of {WARP}")
    if num("atomics"):
        out.append(f"  atomics: {num('atomics')}")
    costly = advice(summary, source_lines)
    out += ["", "Costliest lines:"] + [f"  {c}" for c in costly] if costly else \
        ["", "No line moves more sectors than its bytes need, and no shared access conflicts."]
    out += ["", NOT_MODELLED[0].upper() + NOT_MODELLED[1:] + "."]
    return "\n".join(out)
