"""A performance puzzle's counter targets ([perf] in puzzle.toml), measured and judged.

The performance track teaches speed, and a speed lesson judged by wall time on a laptop's
simulator would judge nothing: its time is Python's. The counters are what the hardware would
do (sectors, wavefronts, idle lanes, colliding atomics), so a target on them is a target on the
reason a kernel is slow, and it holds the same on every machine.

`measure` runs in the child beside the counting (the trace stays there); it gives each counter's
value for the launch and the line that costs the most under it. `missed` runs in the judge,
where the puzzle's expressions meet the config's sizes, and only for a config whose output is
right: a wrong kernel hears about its output first.
"""

from __future__ import annotations

from .counters import SECTOR, WARP, Counters, LineCounters
from ..trace import GLOBAL, SHARED
from ..verdict import Failure
from tutor.puzzles import PERF_TARGETS

# a ratio of sector counts equal in exact arithmetic may differ in the last bit
EPSILON = 1e-9


def _ratio(lines: list[LineCounters], top: str, bottom: str) -> float | None:
    below = sum(getattr(c, bottom) for c in lines)
    return sum(getattr(c, top) for c in lines) / below if below else None


def measure(counters: Counters) -> dict:
    """Each [perf] counter's value for one launch, with its costliest line: name -> {value, line,
    worst} (worst: that line's counters), and the global bytes served, for the intensity."""
    lines = [c for c in counters.lines if c.requests]
    glob = [c for c in lines if c.space == GLOBAL]
    shared = [c for c in lines if c.space == SHARED]
    atomics = [c for c in glob if c.op == "atom"]
    # an atomic reads and writes: a copy made with atomics is judged as one made with loads and stores
    loads = [c for c in glob if c.op == "ld"] + atomics
    stores = [c for c in glob if c.op == "st"] + atomics
    out: dict = {"global_bytes": sum(c.sectors for c in glob) * SECTOR}

    def put(name, value, worst: LineCounters | None):
        out[name] = {"value": value, "line": worst.line if worst else None,
                     "worst": worst.to_json() if worst else None}

    def efficiency(c):
        return c.ideal_sectors / c.sectors if c.sectors else 1.0

    put("global_load_efficiency", _ratio(loads, "ideal_sectors", "sectors"), min(loads, key=efficiency, default=None))
    put("global_store_efficiency", _ratio(stores, "ideal_sectors", "sectors"),
        min(stores, key=efficiency, default=None))
    put("shared_bank_conflicts", sum(c.bank_conflicts for c in shared),
        max(shared, key=lambda c: c.bank_conflicts, default=None))
    put("shared_lanes_per_request", _ratio(shared, "lanes", "requests"),
        min(shared, key=lambda c: (c.lanes_per_request, -c.requests), default=None))
    put("shared_requests", sum(c.requests for c in shared), max(shared, key=lambda c: c.requests, default=None))
    put("global_atomics", sum(c.lanes for c in atomics), max(atomics, key=lambda c: c.lanes, default=None))
    put("atomic_same_address", max((c.same_address for c in atomics), default=0),
        max(atomics, key=lambda c: c.same_address, default=None))
    return out


def intensity(flops: float | None, measured: dict) -> float | None:
    """FLOPs the puzzle declares over the bytes of the global sectors served: L1's traffic, as
    the trace sees it (caches below it are not modelled)."""
    if flops is None or not measured.get("global_bytes"):
        return None
    return flops / measured["global_bytes"]


def value_of(name: str, measured: dict, flops: float | None) -> float | None:
    """One counter's value from what `measure` gave (the intensity from the puzzle's FLOPs)."""
    if name == "arithmetic_intensity":
        return intensity(flops, measured)
    return (measured.get(name) or {}).get("value")


def _line(worst: dict | None) -> str:
    return f"line {worst['line']}" if worst and worst.get("line") is not None else "the kernel"


def _said(name: str, value: float, target: float, m: dict, flops: float | None) -> str:
    w = m.get("worst") or {}
    at = _line(w)
    if name in ("global_load_efficiency", "global_store_efficiency"):
        what = "loads" if name == "global_load_efficiency" else "stores"
        return (f"Global {what} are served at {value:.0%} efficiency; this puzzle asks for at least "
                f"{target:.0%}. The worst is {at}: {w.get('requests', 0)} request(s) pulled {w.get('sectors', 0)} "
                f"32-byte sectors where the bytes its lanes asked for fill {w.get('ideal_sectors', 0)} "
                f"({w.get('sectors_per_request', 0):g} sectors per request). A warp's 32 lanes access memory "
                "together: when neighbouring lanes touch neighbouring elements their bytes share sectors, "
                "when they are far apart each lane pulls a sector of its own. Let threadIdx.x run along "
                "consecutive addresses.")
    if name == "shared_bank_conflicts":
        return (f"Shared memory has {int(value)} bank conflict(s) (extra wavefronts); this puzzle allows "
                f"{int(target)}. The worst is {at}: {w.get('requests', 0)} request(s) took {w.get('wavefronts', 0)} "
                "wavefronts. Shared memory has 32 banks of 4 bytes; lanes of a warp that touch different "
                "words in the same bank wait for each other. A column of a 32-wide float tile lies in one "
                "bank: pad each row by one element so a column spreads over all 32.")
    if name == "shared_lanes_per_request":
        return (f"Shared-memory instructions run with {value:.3g} active lanes on average; this puzzle asks "
                f"for at least {target:.3g} of a warp's {WARP}. The worst is {at}: "
                f"{w.get('lanes_per_request', 0):g} lanes per request over {w.get('requests', 0)} request(s). "
                "A warp issues an instruction once for all its lanes; lanes that a branch switched off "
                "still cost the warp its turn. Keep the working threads together (the first s threads, "
                "not every 2s-th) so whole warps work or whole warps rest.")
    if name == "shared_requests":
        return (f"The launch made {int(value)} shared-memory requests; this puzzle allows {int(target)}. "
                f"The most are on {at} ({w.get('requests', 0)}). Every round through shared memory is a "
                "store, a barrier and a load; within a warp, lanes can hand values to each other directly "
                "with cuda.shfl_down_sync, and only one value per warp needs shared memory.")
    if name == "global_atomics":
        return (f"The launch made {int(value)} atomic operations on global memory; this puzzle allows "
                f"{int(target)}. The most are on {at}. Atomics on the same few global cells queue up one "
                "after another in L2; count into a private copy in shared memory first, then let each "
                "block add its totals to global memory once per cell.")
    if name == "atomic_same_address":
        return (f"Up to {int(value)} lanes of one warp's global atomic hit the same address; this puzzle "
                f"allows {int(target)}. The worst is {at}. Lanes that update one address are served one "
                "after another: privatise the counters (shared memory per block) so global atomics "
                "go to different cells.")
    if name == "arithmetic_intensity":
        return (f"The kernel does {value:.3g} FLOPs per byte of global memory served ({flops:,.0f} FLOPs over "
                f"{m.get('global_bytes', 0):,} bytes); this puzzle asks for at least {target:.3g}. Each element "
                "brought from global memory should be used many times: load tiles into shared memory once "
                "and let every thread of the block compute from them.")
    return f"{name} is {value:g}; the target is {target:g}."


_NONE = {"global_load_efficiency": "global loads", "global_store_efficiency": "global stores",
         "shared_lanes_per_request": "shared-memory requests", "arithmetic_intensity": "global memory traffic"}


def missed(puzzle, config, measured: dict | None) -> list[Failure]:
    """The targets this config's counters miss, one failure each (kind perf_target)."""
    if not puzzle.perf:
        return []
    if not measured:
        return [Failure(kind="perf_target", config=config.name,
                        message=("This puzzle is judged on its counters, and this run has none (the "
                                 "simulator's trace is needed). Run it on the simulator."))]
    targets = puzzle.perf_for(config)
    flops = puzzle.flops_for(config)
    failures = []
    for name, target in targets.items():
        m = dict(measured.get(name) or {})
        value = value_of(name, measured, flops)
        if name == "arithmetic_intensity":
            m["global_bytes"] = measured.get("global_bytes", 0)
        low = PERF_TARGETS[name] == "min"
        if value is None:
            if low:  # "at least 16 lanes per shared request" with no shared request is not met
                failures.append(Failure(
                    kind="perf_target", config=config.name,
                    message=(f"This puzzle asks for {describe_target(name, target)}, and the kernel made no "
                             f"{_NONE[name]}, so there is nothing to measure. The lesson's technique needs "
                             "them: see its first hint."),
                    details=[{"counter": name, "value": None, "target": target, "direction": "at least"}]))
            continue
        if (value < target - EPSILON) if low else (value > target + EPSILON):
            failures.append(Failure(
                kind="perf_target", config=config.name, line=m.get("line"),
                array=(m.get("worst") or {}).get("array"),
                message=_said(name, value, target, m, flops),
                details=[{"counter": name, "value": value, "target": target,
                          "direction": "at least" if low else "at most"}]))
    return failures


def _number(name: str, value: float) -> str:
    if name.endswith("efficiency"):
        return f"{value:.0%}"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:.3g}"


def _bound(name: str, target: float) -> str:
    return f"{'at least' if PERF_TARGETS[name] == 'min' else 'at most'} {_number(name, target)}"


def describe_target(name: str, target: float) -> str:
    """A target in words: "global load efficiency at least 100%"."""
    return f"{name.replace('_', ' ')} {_bound(name, target)}"


def standing(puzzle, configs: list, results: list) -> str | None:
    """Each target against the worst config's value, in one line for the verdict's notes, so a
    learner sees how far a slow kernel is from its target, and how much room a fast one left."""
    if not puzzle.perf:
        return None
    parts = []
    for name in puzzle.perf:
        low = PERF_TARGETS[name] == "min"
        worst = None
        for config, result in zip(configs, results):
            lens = (result.counters or {}).get("lens")
            if not lens:
                continue
            value = value_of(name, lens, puzzle.flops_for(config))
            if value is not None and (worst is None or (value < worst[0] if low else value > worst[0])):
                worst = (value, puzzle.perf_for(config)[name])
        if worst is not None:
            parts.append(f"{name.replace('_', ' ')} {_number(name, worst[0])} (target: {_bound(name, worst[1])})")
    return "counters against the targets, worst config: " + "; ".join(parts) if parts else None
