"""A performance puzzle's counter targets ([perf] in puzzle.toml), measured and judged.

The performance track teaches speed, and a speed lesson judged by wall time on a laptop's
simulator would judge nothing: its time is Python's. The counters are what the hardware would
do (sectors, wavefronts, idle lanes, colliding atomics), so a target on them is a target on the
reason a kernel is slow, and it holds the same on every machine.

Every target is a total of the launch, and a ratio compares what the kernel moved with what its
data needs: the sectors that hold the global elements it loaded (or stored), each fetched once;
the fewest shared wavefronts its accesses need, one instruction per access of the busiest lane of
each warp in each barrier phase. A request is one warp's run of one instruction in one barrier
phase, so a request written as one line per lane or per branch is cheaper piece by piece and costs
the same or more in total, as it does on the GPU; one spread over barrier phases is more requests
with fewer lanes each, which `shared_requests` and `shared_lanes_per_request` count.

`measure` runs in the child beside the counting (the trace stays there); it gives each counter's
value for the launch and the line that costs the most under it. `missed` runs in the judge,
where the puzzle's expressions meet the config's sizes, and only for a config whose output is
right: a wrong kernel hears about its output first.
"""

from __future__ import annotations

from .counters import SECTOR, WARP, Counters, LineCounters
from ..trace import GLOBAL, SHARED
from ..verdict import Failure
from tutor.plural import counted, plural
from tutor.puzzles import PERF_TARGETS

# a ratio of sector counts equal in exact arithmetic may differ in the last bit
EPSILON = 1e-9


def measure(counters: Counters) -> dict:
    """Each [perf] counter's value for one launch, with its costliest line: name -> {value, line,
    worst} (worst: that line's counters; for a ratio of totals also moved and needed), and the
    global bytes served, for the intensity."""
    lines = [c for c in counters.lines if c.requests]
    glob = [c for c in lines if c.space == GLOBAL]
    shared = [c for c in lines if c.space == SHARED]
    atomics = [c for c in glob if c.op == "atom"]
    # an atomic reads and writes: a copy made with atomics is judged as one made with loads and stores
    loads = [c for c in glob if c.op == "ld"] + atomics
    stores = [c for c in glob if c.op == "st"] + atomics
    out: dict = {"global_bytes": sum(c.sectors for c in glob) * SECTOR}

    def put(name, value, worst: LineCounters | None, **totals):
        out[name] = {"value": value, "line": worst.line if worst else None,
                     "worst": worst.to_json() if worst else None, **totals}

    def beyond_need(c):  # what a line moved that the data did not need, then its requests
        return (c.wavefronts if c.space == SHARED else c.sectors) - c.needed, c.requests

    for name, group, needed in (("global_load_efficiency", loads, counters.needed_load_sectors),
                                ("global_store_efficiency", stores, counters.needed_store_sectors)):
        moved = sum(c.sectors for c in group)
        put(name, needed / moved if moved else None, max(group, key=beyond_need, default=None),
            moved=moved, needed=needed)
    wavefronts = sum(c.wavefronts for c in shared)
    put("shared_extra_wavefronts", wavefronts - counters.needed_wavefronts if shared else 0,
        max(shared, key=beyond_need, default=None), moved=wavefronts, needed=counters.needed_wavefronts)
    requests = sum(c.requests for c in shared)
    put("shared_lanes_per_request", sum(c.lanes for c in shared) / requests if requests else None,
        min(shared, key=lambda c: (c.lanes_per_request, -c.requests), default=None))
    put("shared_requests", requests, max(shared, key=lambda c: c.requests, default=None))
    put("global_atomics", sum(c.lanes for c in atomics), max(atomics, key=lambda c: c.lanes, default=None))
    hot = next((c for c in atomics if c.line == counters.hot_line), None)
    put("atomic_same_address", counters.hot_address, hot)
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
        what, verb = ("loads", "read") if name == "global_load_efficiency" else ("stores", "wrote")
        return (f"Global {what} moved {m.get('moved', 0):,} 32-byte sectors where the elements they {verb} "
                f"fill {m.get('needed', 0):,}: {value:.0%} efficiency; this puzzle asks for at least "
                f"{target:.0%}. The worst is {at}: {counted(w.get('requests', 0), 'request')} pulled "
                f"{counted(w.get('sectors', 0), 'sector')}, {w.get('sectors', 0) - w.get('needed', 0)} of them "
                "sectors that other requests "
                f"pulled too ({w.get('sectors_per_request', 0):g} sectors per request). A warp's 32 lanes "
                "access memory together: when neighbouring lanes touch neighbouring elements in one "
                "instruction their bytes share sectors; when they are far apart, or their accesses are "
                "split over several instructions (lines, branches, loop passes), the same sector is "
                "pulled again and again. Let threadIdx.x run along consecutive addresses.")
    if name == "shared_extra_wavefronts":
        extra = w.get("wavefronts", 0) - w.get("needed", 0)
        return (f"Shared memory took {m.get('moved', 0):,} {plural(m.get('moved', 0), 'wavefront')} where the "
                f"accesses need "
                f"{m.get('needed', 0):,} (one per access of the busiest lane of each warp, barrier phase by barrier "
                f"phase): {int(value):,} "
                f"extra; this puzzle allows {int(target)}. The worst is {at}: {counted(w.get('requests', 0), 'request')} "
                f"took {counted(w.get('wavefronts', 0), 'wavefront')}, {extra} more than its accesses need. Shared memory "
                "has 32 banks of 4 bytes; lanes of a warp that touch different words in the same bank, or "
                "update one word with an atomic, wait for each other, and a warp's accesses split over "
                "several instructions take a wavefront each. A column of a 32-wide float tile lies in one "
                "bank: pad each row by one element so a column spreads over all 32.")
    if name == "shared_lanes_per_request":
        return (f"Shared-memory instructions run with {value:.3g} active lanes on average; this puzzle asks "
                f"for at least {target:.3g} of a warp's {WARP}. The worst is {at}: "
                f"{w.get('lanes_per_request', 0):g} lanes per request over {counted(w.get('requests', 0), 'request')}. "
                "A warp issues an instruction once for all its lanes; lanes that a branch switched off "
                "still cost the warp its turn. Keep the working threads together (the first s threads, "
                "not every 2s-th) so whole warps work or whole warps rest.")
    if name == "shared_requests":
        return (f"The launch made {counted(int(value), 'shared-memory request')}; this puzzle allows {int(target)}. "
                f"The most are on {at} ({w.get('requests', 0)}). Every round through shared memory is a "
                "store, a barrier and a load; within a warp, lanes can hand values to each other directly "
                "with cuda.shfl_down_sync, and only one value per warp needs shared memory.")
    if name == "global_atomics":
        return (f"The launch made {int(value)} atomic operations on global memory; this puzzle allows "
                f"{int(target)}. The most are on {at}. Atomics on the same few global cells queue up one "
                "after another in L2; count into a private copy in shared memory first, then let each "
                "block add its totals to global memory once per cell.")
    if name == "atomic_same_address":
        return (f"One block made {int(value):,} global atomics on the same address; this puzzle allows "
                f"{int(target)}. Most of them are on {at}. Updates of one address are served one after "
                "another, from whichever warp or line they come: privatise the counters (shared memory "
                "per block) so each block adds to each global cell once.")
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
