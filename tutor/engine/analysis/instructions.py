"""What one execution of each source line costs a warp in instructions, read from the PTX that
Numba's real compiler emits for the kernel.

The simulator's trace records memory accesses, so a model built on it alone counts memory and
nothing else: a kernel that adds 300,000 dependent `sin` calls in one thread looked free. The
compiler knows what each line turns into. With line information on (`lineinfo=True`), every PTX
instruction follows a `.loc file line` directive, so the instructions of each source line can be
counted and classed. The simulator then says how many times each warp ran each line
(linecounts.py); this module says what one run of the line costs.

Two figures per line, per execution:
  issue     cycles of one SM sub-partition's issue slot (a warp instruction of 32 lanes on units
            that serve fewer lanes per cycle takes several): what many warps doing independent
            work pay, one after another.
  latency   the longest chain of dependent instructions of the line (through registers), in
            cycles: what one warp doing dependent work waits. A GPU issues a warp's instructions
            in order, so a loop's trips add their chains one after another.

Memory loads, stores and atomics of global and shared memory are left to the memory model
(modelled_time.py); local memory (`cuda.local.array`, spilled registers) is counted here.

Where the compiler copied a line (a loop unrolled, a remainder loop after it), its instructions
are counted once: per PTX loop (a label and a branch back to it), the copies of a line repeat
the same opcodes, and the loop holding the fewest instructions of the line is one copy (a
runtime-unrolled loop's remainder loop). A line unrolled into straight code is divided by the
trip counts of its constant loops (modelled_time.unroll_factors). Rare paths (the slow path of
`sin` for huge arguments) are counted as if taken: the PTX does not say how often a branch goes
which way.

The figures (COSTS) are round numbers of the order NVIDIA's programming guide gives for compute
capability 9.0's throughputs (per SM per cycle: 128 fp32, 64 fp64, 16 special-function, 64 int32
results) and published microbenchmarks give for latencies; they are chosen in advance, not fitted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# class -> (issue cycles per warp instruction on one SM sub-partition, latency in cycles)
COSTS = {
    "fp32": (1.0, 4),          # 32 fp32 lanes per sub-partition
    "fp64": (2.0, 8),          # 16 fp64 lanes per sub-partition on GH100
    "int": (2.0, 4),           # 16 int32 lanes per sub-partition
    "int64": (4.0, 8),         # 64-bit integer arithmetic is two or more 32-bit instructions
    "int64_mul": (8.0, 16),    # a 64-bit multiply is several 32-bit multiply-adds
    "move": (0.5, 2),          # register moves mostly vanish in the machine code
    "branch": (1.0, 4),
    "sfu": (8.0, 20),          # sin/cos/exp2/log2/rsqrt/rcp approximations: 4 lanes per sub-partition
    "conv": (8.0, 10),         # conversions run on 16 lanes per SM
    "fp32_div": (12.0, 40),    # an IEEE float32 divide or square root: a reciprocal and a Newton step
    "fp64_div": (40.0, 180),   # an IEEE float64 divide or square root: an iterative sequence of fp64 ops
    "int_div": (24.0, 100),    # a 32-bit integer divide or modulo by a run-time value: a sequence
    "int64_div": (80.0, 400),  # a 64-bit one: a long sequence, or a call
    "local": (1.0, 33),        # a local-memory load or store: through L1, a hit costs L1's latency
    "shuffle": (2.0, 30),      # a warp shuffle or vote goes through the shared-memory crossbar
    "call": (4.0, 40),
    "sleep": (1.0, 0),         # its own figure: the nanoseconds it asks for (_sleep_cycles)
}
CLOCK_HZ = 1.98e9
MOST_SLEEP_NS = 1_000_000  # cuda.nanosleep sleeps at most about a millisecond

# the address spaces the memory model counts: their loads and stores are not counted here
_MEMORY = re.compile(r"^(ld|st|atom|red|ldu|cp\.async|prefetch)\.(global|shared|param|const)|"
                     r"^(ld|st|atom|red)\.(?!local)[a-z]|^(bar|barrier|membar|fence)\b")
_LOC = re.compile(r"^\.loc\s+(\d+)\s+(\d+)")
_FILE = re.compile(r'^\.file\s+(\d+)\s+"([^"]*)"')
_LABEL = re.compile(r"^(\$?[\w$]+):")
_BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$?[\w$]+)\s*;")
_REG = re.compile(r"%[a-zA-Z]+\d*")


@dataclass
class LineCost:
    """One source line's cost per execution by one warp, and its instructions by class."""

    issue: float = 0.0
    latency: float = 0.0
    classes: dict = field(default_factory=dict)   # class -> instructions per execution
    chased: bool = False  # a load of the line takes its address from a load before it: no two are in flight
    trips_in_flight: float | None = None  # runs of the line whose loads the warp has in flight together

    def to_json(self) -> dict:
        return {"issue": round(self.issue, 3), "latency": round(self.latency, 3),
                "classes": {k: round(v, 3) for k, v in self.classes.items()}, "chased": self.chased,
                "trips_in_flight": self.trips_in_flight}


def instruction_class(op: str) -> str | None:
    """The class of one PTX instruction (its mnemonic with suffixes), or None where the memory
    model counts it or it costs nothing."""
    if _MEMORY.match(op):
        return None
    head = op.split(".")[0]
    parts = set(op.split(".")[1:])
    if head in ("ld", "st") and "local" in parts:
        return "local"
    if head == "nanosleep":
        return "sleep"
    if head in ("shfl", "vote", "match", "redux", "activemask"):
        return "shuffle"
    if head in ("call",):
        return "call"
    if head in ("bra", "ret", "exit", "brx"):
        return "branch"
    if head in ("mov", "cvta"):
        return "move"
    if head == "cvt":
        return "conv"
    if head in ("sin", "cos", "ex2", "lg2", "tanh") or (head in ("rsqrt", "rcp", "sqrt") and "approx" in parts):
        return "sfu" if "f64" not in parts or head == "rsqrt" or "ftz" in parts else "fp64_div"
    if head in ("div", "rem"):
        if "f64" in parts:
            return "fp64_div"
        if "f32" in parts:
            return "fp32_div" if "approx" not in parts else "sfu"
        return "int64_div" if parts & {"s64", "u64", "b64"} else "int_div"
    if head in ("sqrt", "rcp"):
        return "fp64_div" if "f64" in parts else "fp32_div"
    if "f64" in parts:
        return "fp64"
    if "f32" in parts or "f16" in parts or "f16x2" in parts or "bf16" in parts:
        return "fp32"
    if parts & {"s64", "u64", "b64"}:
        if head in ("mul", "mad") and "wide" not in parts:
            return "int64_mul"
        return "int64"
    if head in ("setp", "selp", "and", "or", "xor", "not", "shl", "shr", "add", "sub", "mul", "mad", "min", "max",
                "abs", "neg", "popc", "clz", "brev", "bfe", "bfi", "prmt", "addc", "subc", "madc", "shf", "lop3",
                "dp4a", "dp2a", "slct", "set", "testp", "copysign", "fns", "bfind", "sad", "mul24", "mad24"):
        return "int"
    return None


@dataclass
class _Instr:
    line: int
    op: str
    dest: str | None
    srcs: tuple
    region: int
    block: int = 0  # the basic block it is in
    operands: str = ""


@dataclass
class Program:
    """A kernel's instructions and its basic blocks' forward successors."""

    instrs: list
    successors: dict  # block -> [blocks control may go to next, later in the text]


def parse(ptx: str) -> Program:
    """The instructions of the PTX's first kernel file, each with its source line and the
    innermost PTX loop around it (0: straight code). Instructions under a `.loc` of another file
    (inlined library code with a location of its own) count for the last line of ours before them."""
    lines = ptx.splitlines()
    ours: set = set()
    for raw in lines:
        m = _FILE.match(raw.strip())
        if m and not m.group(2).startswith("<") and "numba" not in m.group(2).split("/")[-3:-1]:
            ours.add(m.group(1))
    if not ours:
        ours = {"1"}
    labels: dict = {}
    current = 0
    instrs: list = []
    for raw in lines:
        text = raw.split("//")[0].strip()
        if not text:
            continue
        m = _LOC.match(text)
        if m:
            if m.group(1) in ours:
                # line 0 is code LLVM merged from several lines (both arms of an `if` computing the
                # same thing, sunk to where they meet): marked with the line before it, negated, for
                # line_costs to place
                current = int(m.group(2)) or -abs(current)
            continue
        m = _LABEL.match(text)
        if m:
            labels[m.group(1)] = len(instrs)
            continue
        if text.startswith(".") or text in ("{", "}", ")") or text.startswith("("):
            continue
        instrs.append((current, text))
    # loops: a branch to a label at or before it
    # loops: a conditional branch back to a label before it (LLVM rotates loops so that the test
    # is at the bottom); an unconditional jump back is cold code laid out after its way back in
    loops = []
    for i, (_, text) in enumerate(instrs):
        m = _BRANCH.search(text)
        if m and text.startswith("@") and m.group(1) in labels and labels[m.group(1)] <= i:
            loops.append((labels[m.group(1)], i))
    starts = set(labels.values())
    out = []
    block, successors = 0, {}
    for i, (line, text) in enumerate(instrs):
        if i in starts and i and out and out[-1].block == block:
            successors.setdefault(block, []).append(block + 1)  # falls through into the label
            block += 1
        inner = [(a, b) for a, b in loops if a <= i <= b]
        region = 0
        if inner:
            a, b = min(inner, key=lambda ab: ab[1] - ab[0])
            region = loops.index((a, b)) + 1
        guard = text.startswith("@")
        if guard:
            text = text.split(None, 1)[1] if " " in text else text
        op, _, rest = text.partition(" ")
        op = op.strip().rstrip(";")
        regs = _REG.findall(rest)
        stores = op.startswith(("st.", "bra", "red.", "bar", "ret", "exit")) or op in ("bra", "ret")
        dest = None if stores or not regs else regs[0]
        srcs = tuple(regs if stores else regs[1:])
        out.append(_Instr(line, op, dest, srcs, region, block, rest))
        if op.startswith(("bra", "ret", "exit")):
            target = _BRANCH.search(text)
            nexts = successors.setdefault(block, [])
            if target and target.group(1) in labels:
                nexts.append(("label", labels[target.group(1)]))
            if guard:
                nexts.append(block + 1)
            block += 1
    # a branch names a label: the block that starts at that instruction
    first = {}
    for ins_index, ins in enumerate(out):
        first.setdefault(ins.block, ins_index)
    at = {index: b for b, index in first.items()}
    resolved = {}
    for b, nexts in successors.items():
        resolved[b] = sorted({at.get(n[1], -1) if isinstance(n, tuple) else n for n in nexts} - {-1})
    return Program(out, resolved)


_VECTOR = re.compile(r"^(?:ld|st)\.(?:shared|global)(?:\.\w+)*?\.v([24])\.")


def vector_widths(ptx: str | Program) -> dict[int, int]:
    """{source line: the widest vector access (2 or 4 elements) its compiled code makes to shared
    or global memory}. NVVM merges neighbouring loads or stores of one line into one instruction
    (ld.shared.v4.f32) where it can prove them adjacent and aligned: the hardware then serves four
    of a lane's elements as one request, which the trace records as four. `ptx` may be parsed
    already (before line_costs, which moves merged code's instructions to other lines)."""
    widths: dict = {}
    for ins in (ptx if isinstance(ptx, Program) else parse(ptx)).instrs:
        m = _VECTOR.match(ins.op)
        if m and ins.line > 0:
            widths[ins.line] = max(widths.get(ins.line, 0), int(m.group(1)))
    return widths


LIBRARY_TRIPS = 16  # trips priced for a library function's own loop (how many it makes depends on the values)
# the most copies of a line one loop of the compiled code is taken to hold: LLVM unrolls a loop it keeps
# by a few (4 for a runtime trip count; 16 seen for a small body); more alike instructions on one line
# are work of the line itself (2,000 `y = sqrt(y)` joined by `;`), not copies
MOST_COPIES = 16


def line_costs(ptx: str | Program, unroll: dict | None = None, statements: dict | None = None,
               headers: set | None = None) -> dict[int, LineCost]:
    """{source line: its cost per execution by one warp}, from the kernel's PTX. `unroll`:
    {line: constant trips its loops are unrolled into straight code} (modelled_time.unroll_factors'
    constant part); where a line's instructions lie in no PTX loop, they are divided by it.
    `statements`: {line: first line of its statement} (sim/linecounts.statement_lines): a
    statement's instructions are counted on its first line, where its runs are counted.
    `headers`: the lines of our own loops' headers (a loop on one line is ours, not a library's)."""
    program = ptx if isinstance(ptx, Program) else parse(ptx)  # parsed once by modelled_time
    own: dict = {}
    for ins in program.instrs:
        if ins.line > 0:
            own.setdefault(ins.region, set()).add(ins.line)
    for ins in program.instrs:
        if ins.line < 0:  # merged code: a loop's own line runs every trip; else the line before it
            inside = sorted(own.get(ins.region, set()) & set(headers or ())) if ins.region else []
            ins.line = inside[-1] if inside else -ins.line
        ins.line = (statements or {}).get(ins.line, ins.line)
    lines_of: dict = {}
    for ins in program.instrs:
        lines_of.setdefault(ins.region, set()).add(ins.line)
    mixed = {r for r, ls in lines_of.items() if len(ls) > 1}
    by_line_region: dict = {}
    by_region: dict = {}
    for ins in program.instrs:
        by_line_region.setdefault(ins.line, {}).setdefault(ins.region, []).append(ins)
        by_region.setdefault(ins.region, []).append(ins)
    in_flight = {region: _loads_before_use(group) for region, group in by_region.items()}
    costs = {}
    for line, regions in by_line_region.items():
        if not line:
            continue
        # a loop of the compiled code that holds this line's instructions and no other line's is a
        # library function's own loop (fmod walks the exponents one bit a trip): no line event counts
        # its trips, so it is priced at LIBRARY_TRIPS of them
        library = {r for r, v in regions.items() if r and r not in mixed and line not in (headers or ())}
        loops = {r: v for r, v in regions.items() if r and r not in library}
        best, where, best_copies = None, None, 1
        for region, group in (loops or {r: v for r, v in regions.items() if r not in library}).items():
            counted = _common_path([i for i in group if instruction_class(i.op)], program.successors)
            if loops:  # copies of an unrolled loop of ours: LLVM unrolls a loop it keeps a few times at most
                copies = min(MOST_COPIES, max(_copies([i.op for i in counted]), _runs(counted, program.instrs)))
            else:  # straight code is copied only by a loop of constant trips unrolled whole
                copies = (unroll or {}).get(line, 1)
            cost = _cost(counted, copies)
            # the dearest copy: a helper inlined twice may fold away at one call and not the other
            if best is None or cost.issue > best.issue:
                best, where, best_copies = cost, region, copies
        for region in library:
            extra = _cost(_common_path([i for i in regions[region] if instruction_class(i.op)],
                                       program.successors), 1)
            best = best or LineCost()
            best.issue += LIBRARY_TRIPS * extra.issue
            best.latency += LIBRARY_TRIPS * extra.latency
            for k, v in extra.classes.items():
                best.classes[k] = best.classes.get(k, 0) + LIBRARY_TRIPS * v
            where = region if where is None else where
        if best is None:
            continue
        best.chased = any(_chased(group) for group in regions.values())
        loads = sum(1 for i in regions[where] if _memory_load(i.op))
        groups = in_flight[where].get(line)
        if loads and groups:
            # the loads of one trip, and how many of them the warp issues before it waits for one
            per_trip = loads / best_copies
            best.trips_in_flight = max(1.0, (sum(groups) / len(groups)) / per_trip)
        if best.issue > 0 or best.chased or best.trips_in_flight:
            costs[line] = best
    return costs


def _memory_load(op: str) -> bool:
    return op.startswith(("ld.global", "ld.shared", "ldu.global", "ld.global.nc"))


def _loads_before_use(group: list[_Instr]) -> dict:
    """{line: [its loads in each basic block that has any]}: the loads a warp has in flight together.
    ptxas schedules a basic block's loads ahead of their uses (the PTX order is not the machine's),
    but it cannot move a load above a branch that guards it: a load may fault where its guard is
    false. So a runtime loop unrolled four times has four trips' loads in flight, and a constant
    loop whose every trip sits behind an `if` has one."""
    out: dict = {}
    counts: dict = {}
    for ins in group:
        if _memory_load(ins.op):
            key = (ins.block, ins.line)
            counts[key] = counts.get(key, 0) + 1
    for (_, line), n in counts.items():
        out.setdefault(line, []).append(n)
    return out


def _loads(op: str) -> bool:
    return op.startswith(("ld.global", "ld.shared", "ldu.global", "ld.local", "ld.")) and not op.startswith("ld.param")


def _chased(group: list[_Instr]) -> bool:
    """Does a load of this line take its address from a value a load of the same line gave (a
    pointer chase: `j = nxt[j]`)? Two passes, so the value a trip hands the next counts too."""
    tainted: set = set()
    for _ in range(2):
        for ins in group:
            hit = any(r in tainted for r in ins.srcs)
            if _loads(ins.op):
                if hit:
                    return True
                if ins.dest:
                    tainted.add(ins.dest)
            elif hit and ins.dest:
                tainted.add(ins.dest)
    return False


def _common_path(group: list[_Instr], successors: dict) -> list[_Instr]:
    """The instructions of one line on its common way from its first basic block to its last. A
    library function's code (Numba inlines libdevice's `sin`, `pow`, ...) branches around special
    cases, which are short (an infinity, a zero) and around slow paths, which call a function of
    their own or do long carry arithmetic (the argument reduction of `sin` for huge arguments): the
    common way is the longest one that keeps out of those, where one does; else the longest. A
    local-memory load of ours is never taken for a slow path."""
    blocks: dict = {}
    for ins in group:
        blocks.setdefault(ins.block, []).append(ins)
    if len(blocks) <= 1:
        return group
    order = sorted(blocks)
    first, last = order[0], order[-1]
    local = {b for b, members in blocks.items() if any(instruction_class(i.op) == "call" or ".cc" in i.op
                                                        for i in members)}

    def cost(b):
        return sum(COSTS[instruction_class(i.op)][0] for i in blocks.get(b, ()))

    def longest(avoid: set):
        if first in avoid:
            return None
        best = {first: (cost(first), None)}
        for b in range(first, last + 1):
            if b not in best:
                continue
            for nxt in successors.get(b, [b + 1] if b + 1 <= last else []):
                if b < nxt <= last and nxt not in avoid:
                    total = best[b][0] + cost(nxt)
                    if nxt not in best or total > best[nxt][0]:
                        best[nxt] = (total, b)
        if last not in best:
            return None
        path, b = [], last
        while b is not None:
            path.append(b)
            b = best[b][1]
        return [ins for b in reversed(path) for ins in blocks.get(b, ())]

    return longest(local) or longest(set()) or group


def _runs(group: list[_Instr], instrs: list[_Instr]) -> int:
    """How many copies of a line its unrolled code holds, told by how it lies in the text: each
    copy is a run of the line's instructions between other lines' (the loop counter's, the next
    statement's). Counted only where the runs are alike in length (within a third of their mean),
    so that one statement split around another is not taken for copies of it."""
    if len(group) < 2:
        return 1
    index = {id(ins): n for n, ins in enumerate(instrs)}
    positions = sorted(index[id(ins)] for ins in group if id(ins) in index)
    ours = set(positions)
    runs, length = [], 0
    for pos in range(positions[0], positions[-1] + 1):
        if pos in ours:
            length += 1
        elif length and instruction_class(instrs[pos].op):  # another line's instruction ends a run
            runs.append(length)
            length = 0
    if length:
        runs.append(length)
    if len(runs) < 2:
        return 1
    mean = sum(runs) / len(runs)
    return len(runs) if all(abs(r - mean) <= mean / 3 for r in runs) else 1


def _copies(ops: list[str]) -> int:
    """How many identical copies of one opcode sequence `ops` is (an unrolled loop's trips). The
    loop's own branch back, once after the last copy, is not part of a copy."""
    ops = [op for op in ops if not op.startswith("bra")]
    n = len(ops)
    for p in range(1, n // 2 + 1):
        if n % p == 0 and ops == ops[:p] * (n // p):
            return n // p
    return 1


def _cost(group: list[_Instr], copies: int) -> LineCost:
    ready: dict = {}
    longest = 0.0
    issue = 0.0
    classes: dict = {}
    for ins in group:
        kind = instruction_class(ins.op)
        cycles, latency = COSTS[kind]
        if kind == "sleep":  # the warp waits as long as it asked; a duration known only at run time, the most
            asked = re.search(r"\b(\d+)\b", ins.operands.split("%")[0]) if "%" not in ins.operands else None
            latency = min(int(asked.group(1)) if asked else MOST_SLEEP_NS, MOST_SLEEP_NS) * 1e-9 * CLOCK_HZ
        issue += cycles
        classes[kind] = classes.get(kind, 0) + 1
        start = max((ready.get(r, 0.0) for r in ins.srcs), default=0.0)
        end = start + latency
        if ins.dest:
            ready[ins.dest] = end
        longest = max(longest, end)
    return LineCost(issue / copies, longest / copies, {k: v / copies for k, v in classes.items()})
