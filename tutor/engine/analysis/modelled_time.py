"""A modelled GPU time for a traced launch, worked out from the simulator's trace and the
compiled kernel for a named device.

This is a model, not a measurement. The simulator has no clock. What it does know is every
memory request each warp made, in program order, and which sectors, lines and banks each one
touched (counters.py); how many times each warp ran each source line (sim/linecounts.py); and,
from Numba's real compile, which instructions each line became (instructions.py). At small shapes
a real GPU is held up by latency, not bandwidth: a warp waits for each load it depends on and for
each dependent instruction, and each kernel launch costs microseconds. So the model adds both
sides up, kernel by kernel:

    t(kernel) = launch + max(blocks, DRAM bytes / bandwidth, same-address atomics x one atomic)

  blocks    the blocks run in waves of (SMs x resident blocks per SM) (occupancy from
            device_model). A wave lasts as long as its slowest block's latency chain, its busiest
            SM's memory pipe, or its busiest SM's instruction issue, whichever is longest. The
            pipe serves one wavefront per cycle: one per 128-byte line a global request touches,
            one per shared wavefront (bank conflicts add more).
  chain     the sum, phase by phase (block barriers split a block into phases), of the slowest
            warp's rounds of loads, plus one barrier cost per barrier, plus the slowest warp's
            dependent instructions: each run of a line costs the longest chain of dependent
            instructions in the line's compiled code (a loop's trips wait on one another: a GPU
            issues a warp's instructions in order). A round is the set of loads a warp has in
            flight together: the loads of one basic block of the compiled code (ptxas moves a
            block's loads ahead of their uses, never above the branch that guards them), so an
            unrolled loop's trips are one round unless each sits behind an `if`; without the
            compiled code, as LLVM unrolls (`unroll_factors`). A line whose load takes its address
            from a value a load of the same line read (a pointer chase) has one load per round.
            A store ends the round of loads of its own space (global or shared): it waits for
            the value it writes, and no later load of that space moves above it. A round lasts as
            long as the deepest memory level it reaches, plus one cycle for each wavefront after
            the first. The levels: DRAM for a sector nothing has touched yet (the timer flushes L2
            before every run), L2 for a sector an earlier kernel or an earlier wave touched, L1
            for a sector this block loaded in an earlier round, and shared memory.
  issue     each SM's four schedulers issue one warp instruction per cycle between them, at the
            rate of the unit each instruction needs (instructions.COSTS): the instructions of each
            line times the runs each warp made of it. A warp whose lanes took different branches,
            or ran a line at different trips of a loop, runs each path one after another.
  DRAM      each sector the launch sequence touches, counted once: L2 (50 MB on an H200) holds
            the whole working set at the shapes the coach scores.
  atomics   atomics on one address are done one after another at the L2.

What it leaves out, on purpose: registers and occupancy limits other than threads and shared
memory, cache capacity and eviction (caches are taken as large enough), TLB misses, clocks
dropping under load, how often a branch inside a line's own code is taken (a library function's
common path is counted: instructions.py), and scratch buffers from one kernel to the next (the
trace does not say which buffer a scratch argument is, so its first touch in each kernel counts
as DRAM). Stores and atomics do not wait for memory; they use the pipe and bandwidth, and end the
round of loads before them.

The figures (`TIMINGS`, instructions.COSTS) are chosen in advance from published numbers for the
H200/Hopper. None of them is fitted to our measurements. bench/modelled_time.py compares the
model's ranking of kernels with times measured on a GPU, over the tasks' kernels and kernels
written to stress the model (tests/coach/calibration/), and writes kernels/calibration.json.
"""

from __future__ import annotations

import ast
import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field

from .counters import SECTOR, bank_wavefronts, itemsize, units
from .device_model import DEVICES, Device, occupancy
from .instructions import line_costs, parse, vector_widths
from ..trace import ATOMIC, GLOBAL, READ, SHARED, UNINIT_READ, WRITE, Trace

LINE = 128  # bytes per L1 cache line: the L1 pipe serves one line of a request per cycle

NOT_MODELLED = ("a model, not a measurement: registers, occupancy limits other than threads and shared memory, "
                "cache capacity, branch probabilities and clock changes are left out")


@dataclass(frozen=True)
class Timing:
    """The figures the model uses for one device, in cycles of its SM clock unless the name says
    otherwise. Each is a round figure of the order published measurements give. None is fitted to
    the bench's measurements: a model tuned to the kernels it is checked on would prove nothing."""

    clock_hz: float          # SM clock: the GH100's boost clock in its SXM parts, 1,980 MHz (the H200 is a
    #                          GH100 with HBM3e)
    launch_s: float          # one kernel in a stream, from start to end, doing nothing: "a few microseconds"
    #                          is the usual figure for an empty launch; 2 us
    dram_cycles: int         # a load that misses L2. Pointer-chasing microbenchmarks of Hopper (Luo et al.,
    #                          "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture", 2024; Chips
    #                          and Cheese, "Nvidia's H100: Funny L2, and Tons of Bandwidth", 2023) put HBM at
    #                          several hundred cycles; 600 (300 ns)
    l2_cycles: int           # an L2 hit: a couple of hundred cycles in the same sources; 260 (130 ns)
    l1_cycles: int           # an L1 hit: some 30-40 cycles; 33
    shared_cycles: int       # a shared-memory load: about 30 cycles
    barrier_cycles: int      # __syncthreads once every warp has arrived: a few tens of cycles; 20
    atomic_cycles: float     # one atomic on one address: NVIDIA's Kepler GK110 whitepaper gives one per clock
    #                          for atomics to a common address; later GPUs are taken as no slower
    runtime_unroll: int = 4  # trips of a runtime-trip loop in flight together: LLVM's NVPTX target asks for
    #                          runtime unrolling at a quarter of the usual threshold, and the PTX Numba
    #                          emits for kernels/softmax and kernels/matmul's naive loops has four trips
    #                          per unrolled body
    max_unroll: int = 64     # a constant-trip loop is unrolled whole when it has at most this many trips


TIMINGS = {
    "h200": Timing(clock_hz=1.98e9, launch_s=2.0e-6, dram_cycles=600, l2_cycles=260, l1_cycles=33,
                   shared_cycles=30, barrier_cycles=20, atomic_cycles=1.0),
}


@dataclass
class KernelTime:
    """One kernel launch's modelled time and the terms it is the maximum of (seconds)."""

    name: str
    seconds: float
    launch_s: float
    blocks_s: float          # waves x (slowest block's latency chain, busiest SM's memory pipe or issue)
    latency_s: float         # the latency chains alone, wave by wave (memory rounds and dependent instructions)
    pipe_s: float            # the memory pipe alone, wave by wave
    dram_s: float            # DRAM bytes over bandwidth
    atomic_s: float          # same-address atomics, one after another
    dram_bytes: int
    rounds: int              # dependent rounds of loads on the slowest block's chain
    barriers: int            # barriers on that chain
    waves: int
    blocks_per_sm: int
    issue_s: float = 0.0     # the busiest SM's instruction issue alone, wave by wave
    compute_s: float = 0.0   # the part of latency_s that is dependent instructions, not memory
    instructions: int = 0    # warp instructions the launch issued (0: not counted, no PTX)
    heaviest: list = field(default_factory=list)  # [(line, share of the issue cycles)], costliest first

    def terms(self) -> dict:
        """Each bound's own time: what the kernel would take if only it counted."""
        return {"latency": self.latency_s, "memory pipe": self.pipe_s, "issue": self.issue_s,
                "DRAM bandwidth": self.dram_s, "atomics": self.atomic_s}

    @property
    def bound(self) -> str:
        """What sets the time beyond the launch: "latency", "memory pipe", "issue", "DRAM
        bandwidth", "atomics", or "launch" where nothing else adds up to a tenth of it."""
        terms = self.terms()
        name = max(terms, key=terms.get)
        return "launch" if terms[name] < 0.1 * self.launch_s else name

    @property
    def margin(self) -> float:
        """How many times the bound's own time is the next one's (inf where nothing else counts)."""
        times = sorted(self.terms().values(), reverse=True)
        return times[0] / times[1] if len(times) > 1 and times[1] > 0 else math.inf

    def text(self) -> str:
        margin = f", {self.margin:.3g}x the next bound" if math.isfinite(self.margin) and self.bound != "launch" else ""
        return (f"{self.name}: {_us(self.seconds)} = launch {_us(self.launch_s)} + {self.bound}{margin} "
                f"(latency {_us(self.latency_s)}: {self.rounds} dependent rounds of loads, {_us(self.compute_s)} of "
                f"dependent instructions and {self.barriers} barrier(s) on the slowest block, {self.waves} wave(s) of "
                f"{self.blocks_per_sm} block(s) per SM; issue {_us(self.issue_s)} for {self.instructions:,} warp "
                f"instructions{_heaviest(self.heaviest)}; memory pipe {_us(self.pipe_s)}; DRAM "
                f"{self.dram_bytes:,} bytes, {_us(self.dram_s)}; same-address atomics {_us(self.atomic_s)})")

    def to_json(self) -> dict:
        margin = self.margin
        return {**asdict(self), "bound": self.bound, "margin": margin if math.isfinite(margin) else 0.0}


@dataclass
class ModelledTime:
    """A launch sequence's modelled time on a device: the sum of its kernels'."""

    device: str
    kernels: list[KernelTime] = field(default_factory=list)
    notes: list[str] = field(default_factory=lambda: [NOT_MODELLED])

    @property
    def seconds(self) -> float:
        return sum(k.seconds for k in self.kernels)

    def text(self) -> str:
        head = f"modelled {_us(self.seconds)} on the {self.device} ({'; '.join(self.notes)})"
        return "\n".join([head] + [f"  {k.text()}" for k in self.kernels])

    def to_json(self) -> dict:
        return {"device": self.device, "seconds": self.seconds, "kernels": [k.to_json() for k in self.kernels],
                "notes": list(self.notes)}


def modelled_time(traces, source: str | None = None, device: str = "h200", names=None, ptx=None) -> ModelledTime:
    """The modelled time of a launch sequence: `traces` are the Traces of one launch() in launch
    order (or a single Trace). `source` is the kernels' module. Its loops say which loads are in
    flight together; without it every loop counts as a runtime loop. `names` are the kernels'
    names, for the text. L2 starts cold and carries over from one kernel to the next, as in a timed
    run of launch() after the timer's flush."""
    if isinstance(traces, Trace):
        traces = [traces]
    dev, timing = DEVICES[device], TIMINGS[device]
    unroll = unroll_factors(source, timing) if source else {}
    in_l2: set = set()
    result = ModelledTime(dev.name)
    constant = constant_unrolls(source, timing) if source else {}
    from ..sim.linecounts import loop_anchors, statement_lines

    statements = statement_lines(source) if source else {}
    headers = {h for hs in loop_anchors(source).values() for h in hs} if source else set()
    for n, trace in enumerate(traces):
        name = names[n] if names and n < len(names) else f"kernel {n + 1}"
        text = ptx[n] if ptx and n < len(ptx) else None
        program = parse(text) if text else None
        vectors = vector_widths(program) if program else {}  # before line_costs moves merged code's lines
        costs = line_costs(program, constant, statements, headers) if program else None
        # where the compiled code says how many runs of a line have their loads in flight before the
        # warp waits for one, that is the line's round (a guarded load waits for itself; a line whose
        # loads chase each other's values has one in flight at a time)
        mine = unroll | {line: max(1, round(c.trips_in_flight)) for line, c in (costs or {}).items()
                         if c.trips_in_flight}
        mine |= {line: 1 for line, c in (costs or {}).items() if c.chased}
        result.kernels.append(_kernel_time(trace, n, name, dev, timing, mine, in_l2, costs, vectors))
    if any(not (ptx and n < len(ptx) and ptx[n]) for n in range(len(traces))) or \
            any(t.line_runs is None for t in traces):
        result.notes.append("instructions not counted (no compiled PTX or no line counts): memory only")
    return result


def floor_seconds(floor_bytes: int, device: str = "h200") -> float:
    """The model's floor for a correct kernel, the time no candidate can beat by more than noise:
    one launch, plus one wait on DRAM (the first load of an input cannot hit a cache the timer
    has flushed) or the floor's bytes at bandwidth, whichever is longer. A kernel that reads each
    input once and writes each output element once, in one round, sits on it."""
    dev, timing = DEVICES[device], TIMINGS[device]
    return timing.launch_s + max(timing.dram_cycles / timing.clock_hz, floor_bytes / dev.bandwidth)


def least_seconds(floor_bytes: int, device: str = "h200") -> float:
    """A bound the model can never go below for a kernel that moves `floor_bytes` through DRAM:
    one launch plus those bytes at bandwidth. Any record that claims less is not the model's."""
    dev, timing = DEVICES[device], TIMINGS[device]
    return timing.launch_s + floor_bytes / dev.bandwidth


def constant_unrolls(source: str, timing: Timing) -> dict:
    """{line: product of the constant trip counts LLVM unrolls it by into straight code}: the lines
    of unroll_factors that sit in fully unrolled loops only (instructions.line_costs divides them)."""
    headers: dict = {}
    factors = _unrolls(source, timing, headers)
    return {line: f for line, f in factors.items() if f is not None} | headers


def unroll_factors(source: str, timing: Timing) -> dict:
    """{line: loads of that line a warp has in flight together}. For a line inside loops of
    constant trip count (range() of literals and module constants, or a literal tuple), this is
    the product of those trip counts, as far out as the first loop that is not constant, when
    LLVM would unroll them fully (at most `max_unroll` trips). For any other line in a loop, it is
    `runtime_unroll`. Lines outside every loop also get `runtime_unroll`: they repeat only inside
    device functions, called from loops we do not follow."""
    return {line: f or timing.runtime_unroll for line, f in _unrolls(source, timing).items()}


def _unrolls(source: str, timing: Timing, headers: dict | None = None) -> dict:
    """{line in a loop: the constant trips it is unrolled by, or None where the innermost loop
    that holds it is not unrolled fully}. `headers`, where given, gets {header line of a fully
    unrolled loop: the trips it is unrolled by, its own included}."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    constants = _module_constants(tree)
    factors: dict = {}

    def walk(node, unrolled):
        # `unrolled`: the product of the constant trip counts of the loops around `node`, out to
        # the nearest loop LLVM would not unroll fully; None when that loop is the innermost.
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.For, ast.While)):
                walk(child, unrolled)
                continue
            trips = _constant_trips(child, constants) if isinstance(child, ast.For) else None
            inner = (unrolled or 1) * trips if trips and (unrolled or 1) * trips <= timing.max_unroll else None
            if inner and headers is not None:
                headers[child.lineno] = inner
            for stmt in child.body + child.orelse:
                for line in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1):
                    factors[line] = inner
            for stmt in child.body + child.orelse:
                walk(ast.Module(body=[stmt], type_ignores=[]), inner)

    walk(tree, None)
    return factors


# -- the model ------------------------------------------------------------------------------------
_LOAD, _STORE, _ATOM = "ld", "st", "atom"
_OPS = {READ: _LOAD, UNINIT_READ: _LOAD, WRITE: _STORE, ATOMIC: _ATOM}
_DRAM, _L2, _L1 = 3, 2, 1


@dataclass
class _Request:
    """One warp request, as counters.requests groups it, with where it sits in the warp's program
    (the furthest any of its lanes had come) and its barrier phase."""

    line: int
    kind: str
    aid: int
    phase: int
    pos: int
    flats: list


def _kernel_time(trace: Trace, n: int, name: str, dev: Device, timing: Timing, unroll: dict,
                 in_l2: set, costs: dict | None = None, vectors: dict | None = None) -> KernelTime:
    """One kernel of the sequence. `in_l2` holds what the kernels before it left in L2; this one
    adds its own sectors for the next, as the hardware's L2 would keep them."""
    arrays = trace.arrays
    roles = list(trace.roles or [])
    keys = [_buffer_key(n, aid, roles) for aid in range(len(arrays))]
    sizes = [itemsize(a.dtype) for a in arrays]
    blocks = _requests_by_block(trace, vectors)
    work, total, heaviest = _warp_work(trace, costs) if costs is not None else ({}, 0, [])
    occ = occupancy(trace, dev)
    per_sm = max(1, occ.blocks_per_sm)
    wave_size = dev.sms * per_sm
    cycle = 1.0 / timing.clock_hz
    touched_before = set(in_l2)     # what L2 holds when this kernel starts
    seen_this_kernel: set = set()
    this_wave: set = set()
    atomics: dict = defaultdict(int)
    latency_s = pipe_s = blocks_s = issue_s = compute_s = 0.0
    slowest = (0.0, 0, 0, 0.0)      # (chain cycles, rounds, barriers, dependent-instruction cycles) of the slowest block
    n_blocks = trace.n_blocks
    order = sorted(set(blocks) | set(work))
    waves = -(-n_blocks // wave_size) if n_blocks else 0
    wave_of = {b: b // wave_size for b in order}
    for w in range(waves):
        members = [b for b in order if wave_of[b] == w]
        in_l2 |= this_wave              # blocks of earlier waves left their sectors in L2
        this_wave = set()
        chain_max, compute_max, pipe_by_sm, issue_by_sm, warp_issue = 0.0, 0.0, defaultdict(float), \
            defaultdict(float), 0.0
        for b in members:
            chain, rounds, barriers, pipe = _block(blocks.get(b, {}), arrays, keys, sizes, unroll, timing, in_l2,
                                                   this_wave, atomics)
            issue, dependent, busiest = work.get(b, (0.0, 0.0, 0.0))
            # a warp waits for its loads and for its own dependent instructions one after another
            chain += dependent
            chain_max = max(chain_max, chain)
            compute_max = max(compute_max, dependent)
            sm = (b - w * wave_size) % dev.sms
            pipe_by_sm[sm] += pipe
            issue_by_sm[sm] += issue
            warp_issue = max(warp_issue, busiest)
            if chain > slowest[0]:
                slowest = (chain, rounds, barriers, dependent)
        seen_this_kernel |= this_wave
        pipe_max = max(pipe_by_sm.values(), default=0.0)
        # an SM's four schedulers share its warps' instructions; one warp stays on one of them
        issue_max = max(max(issue_by_sm.values(), default=0.0) / SCHEDULERS, warp_issue)
        latency_s += chain_max * cycle
        compute_s += compute_max * cycle
        pipe_s += pipe_max * cycle
        issue_s += issue_max * cycle
        blocks_s += max(chain_max, pipe_max, issue_max) * cycle
    in_l2 |= this_wave
    dram_bytes = len(seen_this_kernel - touched_before) * SECTOR
    dram_s = dram_bytes / dev.bandwidth
    atomic_s = max(atomics.values(), default=0) * timing.atomic_cycles * cycle
    seconds = timing.launch_s + max(blocks_s, dram_s, atomic_s)
    return KernelTime(name, seconds, timing.launch_s, blocks_s, latency_s, pipe_s, dram_s, atomic_s, dram_bytes,
                      slowest[1], slowest[2], waves, min(per_sm, max(1, -(-n_blocks // dev.sms))),
                      issue_s=issue_s, compute_s=compute_s, instructions=total, heaviest=heaviest)


SCHEDULERS = 4  # warp schedulers per SM (each issues one warp instruction per cycle)


def _warp_work(trace: Trace, costs: dict) -> tuple[dict, int, list]:
    """({block: (issue cycles of its warps together, the slowest warp's dependent-instruction
    cycles, the busiest warp's issue cycles)}, warp instructions issued, [(line, its share of the
    issue cycles)] for the costliest lines): each warp's runs of each line (sim/linecounts.py)
    times what one run of the line costs (instructions.line_costs), in one pass over the runs."""
    out: dict = {}
    count = 0.0
    by_line: dict = defaultdict(float)
    for warp, keys in (trace.line_runs or {}).items():
        issue = dependent = 0.0
        for _, line, _, _ in keys:
            c = costs.get(line)
            if c is not None:
                issue += c.issue
                dependent += c.latency
                count += sum(c.classes.values())
                by_line[line] += c.issue
        block = warp // 64
        total, slowest, busiest = out.get(block, (0.0, 0.0, 0.0))
        out[block] = (total + issue, max(slowest, dependent), max(busiest, issue))
    whole = sum(by_line.values())
    ranked = sorted(by_line.items(), key=lambda kv: -kv[1])[:3]
    heaviest = [[line, round(v / whole, 3)] for line, v in ranked if whole and v / whole >= 0.05]
    return out, int(round(count)), heaviest


def _heaviest(heaviest: list) -> str:
    if not heaviest:
        return ""
    return " (" + ", ".join(f"line {line} {share:.0%}" for line, share in heaviest) + ")"


def _buffer_key(n: int, aid: int, roles: list):
    """What names an array across the kernels of one launch(): its role where the role is unique
    to one buffer ("out", "input:0"), else this kernel's own array (scratch is not followed)."""
    role = roles[aid] if aid < len(roles) else None
    if isinstance(role, str) and (role == "out" or role.startswith("input:")):
        return role
    return (n, aid)


def _requests_by_block(trace: Trace, vectors: dict | None = None) -> dict:
    """{block: {warp: [_Request in program order]}} of global and shared requests, grouped as
    counters.requests groups them: lanes of one warp, one line, one array, one operation, the
    k-th time each lane made it in one barrier phase. On a line whose compiled code makes vector
    accesses (`vectors`: {line: width}), `width` requests are one where every lane's elements are
    neighbours starting at a multiple of the width, as one vector instruction serves them: the
    line's k-th to (k + width - 1)-th, or the k-th of it and of the lines below it."""
    counted = [a.space in (GLOBAL, SHARED) for a in trace.arrays]
    tpb = trace.threads_per_block
    seen: dict = {}
    position: dict = defaultdict(int)
    groups: dict = {}
    for tid, op, aid, flat, _, line, phase, _ in trace.events:
        kind = _OPS.get(op)
        if kind is None or not counted[aid] or type(flat) is not int:
            continue
        pos = position[tid]
        position[tid] = pos + 1
        key = (tid, line, op, aid, phase)
        k = seen.get(key, 0)
        seen[key] = k + 1
        t = tid % tpb
        group = (tid // tpb, t >> 5, line, kind, aid, phase, k)  # one instruction of a warp in one phase
        request = groups.get(group)
        if request is None:
            groups[group] = _Request(line or 0, kind, aid, phase, pos, [flat])
        else:
            request.flats.append(flat)
            if pos > request.pos:
                request.pos = pos
    if vectors:
        _merge_vectors(groups, vectors)
    blocks: dict = defaultdict(lambda: defaultdict(list))
    for (block, warp, *_), request in groups.items():
        blocks[block][warp].append(request)
    for warps in blocks.values():
        for requests in warps.values():
            requests.sort(key=lambda r: (r.phase, r.pos))
    return blocks


def _merge_vectors(groups: dict, vectors: dict) -> None:
    """Fold the requests one vector instruction makes into one (see _requests_by_block), in place."""
    for group in sorted(g for g in groups if g[2] in vectors):
        first = groups.get(group)
        width = vectors[group[2]]
        if first is None or any(f % width for f in first.flats):
            continue
        block, warp, line, kind, aid, phase, k = group
        # the neighbours are the line's next runs (a loop over them on one line), or the same run
        # of the lines below it (one access a line)
        for keys in ([(block, warp, line, kind, aid, phase, k + u) for u in range(1, width)],
                     [(block, warp, line + u, kind, aid, phase, k) for u in range(1, width)]):
            parts = [groups.get(key) for key in keys]
            if any(p is None or len(p.flats) != len(first.flats) for p in parts) or \
                    any(f + u != g for u, p in enumerate(parts, 1) for f, g in zip(first.flats, p.flats)):
                continue
            for key, p in zip(keys, parts):
                first.flats.extend(p.flats)
                first.pos = max(first.pos, p.pos)
                del groups[key]
            break


def _block(warps: dict, arrays, keys, sizes, unroll: dict, timing: Timing, in_l2: set, this_wave: set,
           atomics: dict) -> tuple[float, int, int, float]:
    """(latency chain in cycles, its rounds of loads, its barriers, memory-pipe cycles) of one block.
    Warps are taken to move in step, so a sector one warp loaded in round r is in L1 for every
    warp of the block from round r + 1 on; loads of the same round all wait for it."""
    steps: dict = defaultdict(lambda: defaultdict(list))    # (phase, round) -> warp -> [(sectors, cost)]
    pipe = 0.0
    last_phase = 0
    for warp, requests in warps.items():
        rnd, phase, counts, spaces = 0, None, {}, set()
        for r in requests:
            info = arrays[r.aid]
            cost = _wavefronts(info.space, r.flats, sizes[r.aid])
            if r.kind == _ATOM and info.space == SHARED:  # lanes on one word take their turns
                cost = max(cost, float(max(r.flats.count(f) for f in set(r.flats))))
            pipe += cost
            last_phase = max(last_phase, r.phase)
            sectors = None  # shared memory
            if info.space == GLOBAL:
                sectors = {(keys[r.aid], s) for s in units(r.flats, sizes[r.aid], SECTOR)}
                if r.kind == _ATOM:
                    for f in r.flats:
                        atomics[(keys[r.aid], f)] += 1
                if r.kind != _LOAD:
                    this_wave |= sectors
            if r.kind != _LOAD:
                # A store or an atomic never makes the warp wait for memory, but it waits for the
                # value it writes, most often the round's loads, and no later load of the same
                # space moves above it: nothing proves two arrays do not overlap, so neither LLVM
                # nor ptxas reorders them (a global load can pass a shared store: the spaces differ).
                if info.space in spaces and r.phase == phase:
                    rnd, counts, spaces = rnd + 1, {}, set()
                continue
            if r.phase != phase:
                rnd, phase, counts, spaces = 0, r.phase, {}, set()
            here = (r.line, r.aid)
            if counts.get(here, 0) >= unroll.get(r.line, timing.runtime_unroll):
                rnd, counts, spaces = rnd + 1, {}, set()
            counts[here] = counts.get(here, 0) + 1
            spaces.add(info.space)
            steps[(phase, rnd)][warp].append((sectors, cost))
    level_cycles = {_DRAM: timing.dram_cycles, _L2: timing.l2_cycles, _L1: timing.l1_cycles, 0: 0}
    in_l1: set = set()
    cycles: dict = defaultdict(lambda: defaultdict(float))     # phase -> warp -> cycles
    rounds: dict = defaultdict(lambda: defaultdict(int))
    for (phase, _), by_warp in sorted(steps.items()):
        loaded: set = set()
        for warp, requests in by_warp.items():
            level, deepest, wavefronts = 0, 0, 0.0
            for sectors, cost in requests:
                wavefronts += cost
                if sectors is None:
                    deepest = max(deepest, timing.shared_cycles)
                    continue
                for u in sectors:
                    lv = _L1 if u in in_l1 else _L2 if u in in_l2 else _DRAM
                    if lv > level:
                        level = lv
                loaded |= sectors
            cycles[phase][warp] += max(deepest, level_cycles[level]) + wavefronts - 1
            rounds[phase][warp] += 1
        in_l1 |= loaded
        this_wave |= loaded
    chain, chain_rounds = 0.0, 0
    for phase, per_warp in cycles.items():
        warp = max(per_warp, key=per_warp.get)
        chain += per_warp[warp]
        chain_rounds += rounds[phase][warp]
    return chain + last_phase * timing.barrier_cycles, chain_rounds, last_phase, pipe


def _wavefronts(space: str, flats: list, size: int) -> float:
    """The pipe cycles of one request: its 128-byte lines (global), or its wavefronts (shared)."""
    if space == GLOBAL:
        return float(len(units(flats, size, LINE)))
    return float(bank_wavefronts(flats, size))


def _module_constants(tree: ast.Module) -> dict:
    """Module-level names bound once to an integer expression of literals and earlier constants."""
    constants: dict = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _int_value(node.value, constants)
            if value is not None:
                constants[node.targets[0].id] = value
    return constants


def _constant_trips(loop: ast.For, constants: dict) -> int | None:
    """The trip count of `for x in range(constants...)` or `for x in (a, b, c)`, else None."""
    it = loop.iter
    if isinstance(it, (ast.Tuple, ast.List)):
        return len(it.elts) or None
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and not it.keywords:
        args = [_int_value(a, constants) for a in it.args]
        if args and all(a is not None for a in args) and len(args) <= 3 and (len(args) < 3 or args[2]):
            return len(range(*args)) or None
    return None


def _int_value(node, constants: dict) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _int_value(node.operand, constants)
        return -v if v is not None else None
    if isinstance(node, ast.BinOp):
        a, b = _int_value(node.left, constants), _int_value(node.right, constants)
        if a is None or b is None:
            return None
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
               ast.FloorDiv: lambda: a // b if b else None, ast.Mod: lambda: a % b if b else None}
        fn = ops.get(type(node.op))
        return fn() if fn else None
    return None


def _us(seconds: float) -> str:
    us = seconds * 1e6
    return f"{us:.3g} us" if us >= 0.01 or us == 0 else "<0.01 us"
