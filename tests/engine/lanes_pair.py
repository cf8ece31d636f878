"""Run one launch on both simulators (lanes, and thread by thread) and say how they differ.

Used by the lanes tests and by bench/simulator.py's --pairs check. The lanes are forced on for
every launch (MIN_THREADS 1), so that the small configs of the classic puzzles test them too."""

from __future__ import annotations

import numpy as np

from tutor.engine.loading.sim_loader import load_for_sim, load_module_for_sim
from tutor.engine.sim import lanes
from tutor.engine.sim.launch import Launch, records


class forced:
    """lanes.ENABLED and MIN_THREADS set for the block's length."""

    def __init__(self, enabled: bool, least: int = 1):
        self.enabled, self.least = enabled, least

    def __enter__(self):
        self.before = lanes.ENABLED, lanes.MIN_THREADS
        lanes.ENABLED, lanes.MIN_THREADS = self.enabled, self.least

    def __exit__(self, *exc):
        lanes.ENABLED, lanes.MIN_THREADS = self.before


def fresh(named):
    return [(k, v.copy() if isinstance(v, np.ndarray) else v) for k, v in named]


def run_one(module, blocks, threads, named, enabled: bool):
    args = fresh(named)
    with forced(enabled):
        launch = Launch(module.kernel, blocks, threads, args, source_lines=module.lines)
        launch.run()
    return launch, args


def _runs(line_runs) -> dict:
    return {w: set(r) for w, r in (line_runs or {}).items() if r}


def same_events(a: list, b: list) -> bool:
    """Equal event for event, NaN equal to NaN and an int never equal to a float (repr tells)."""
    return len(a) == len(b) and (a == b or repr(a) == repr(b))


def differences(a, b, a_args, b_args) -> list[str]:
    """What differs between two launches of one kernel on the same inputs: events (in order),
    barriers, arrays, failures, stopped threads, outputs."""
    ta, tb = a.trace, b.trace
    found = []
    if not same_events(ta.events, tb.events):
        first = next((i for i, (x, y) in enumerate(zip(ta.events, tb.events)) if repr(x) != repr(y)),
                     min(len(ta.events), len(tb.events)))
        found.append(f"events differ at {first} of {len(ta.events)}/{len(tb.events)}: "
                     f"{ta.events[first] if first < len(ta.events) else None} vs "
                     f"{tb.events[first] if first < len(tb.events) else None}")
    if [vars(x) for x in ta.barriers] != [vars(x) for x in tb.barriers]:
        found.append("barriers differ")
    if not same_events([vars(x) for x in ta.arrays], [vars(x) for x in tb.arrays]):  # NaN inputs: repr
        found.append(f"arrays differ: {[x.name for x in ta.arrays]} vs {[x.name for x in tb.arrays]}")
    if a.failures != b.failures:
        found.append(f"failures differ: {a.failures} vs {b.failures}")
    if ta.stopped != tb.stopped:
        found.append("stopped threads differ")
    if (ta.uninit_used, ta.oob_code, ta.printed) != (tb.uninit_used, tb.oob_code, tb.printed):
        found.append("unwritten reads, out-of-bounds notes or printing differ")
    for (name, x), (_, y) in zip(a_args, b_args):
        if isinstance(x, np.ndarray) and not np.array_equal(x, y, equal_nan=True):
            found.append(f"output {name} differs")
    return found


def compare_source(source: str, launches, filename: str = "kernel.py"):
    """[(launch label, lanes' fallback reason or None, differences)] for a kernel file."""
    module = load_for_sim(source, filename)
    out = []
    for label, blocks, threads, named in launches:
        a, a_args = run_one(module, blocks, threads, named, True)
        b, b_args = run_one(module, blocks, threads, named, False)
        out.append((label, a.lanes_fallback, differences(a, b, a_args, b_args)))
    return out


def compare_module(source: str, call, filename: str = "kernel.py", verifier: bool = False, model: bool = False):
    """The same for a module with host code: `call(namespace)` launches; every launch's trace is
    compared. `verifier`: run as the verifier does (local arrays untraced, the lines that ran
    followed), and compare those lines too. Returns [(launch number, lanes that ran, differences)]."""
    from tutor.engine import task_child

    results = []
    runs = []
    for enabled in (True, False):
        module = load_module_for_sim(source, filename)
        before = lanes.TALLY["lanes"]
        if model:  # each warp's runs of each line, as the verifier counts them for the modelled time
            from tutor.engine.sim.linecounts import LineRuns

            follow = LineRuns(module.cuda, filename, source)
        else:
            follow = task_child.LinesRun(verifier)
        with forced(enabled), records(module.cuda, trace_local=not verifier) as done, follow:
            outs = call(module.namespace)
        runs.append((done.traces, outs, follow.lines, lanes.TALLY["lanes"] - before))
    (ta, oa, la, ran), (tb, ob, lb, _) = runs
    if la != lb:
        results.append((-2, ran, [f"lines that ran differ: {sorted(la ^ lb)}"]))
    if len(ta) != len(tb):
        return [(0, False, [f"{len(ta)} launches vs {len(tb)}"])]
    for n, ((xa, fa), (xb, fb)) in enumerate(zip(ta, tb)):
        found = []
        if not same_events(xa.events, xb.events):
            found.append("events differ")
        if [vars(x) for x in xa.barriers] != [vars(x) for x in xb.barriers] or fa != fb:
            found.append("barriers or failures differ")
        if _runs(xa.line_runs) != _runs(xb.line_runs):
            ra, rb = _runs(xa.line_runs), _runs(xb.line_runs)
            extra = next(((w, sorted(ra.get(w, set()) ^ rb.get(w, set()))[:4]) for w in set(ra) | set(rb)
                          if ra.get(w) != rb.get(w)), None)
            found.append(f"each warp's runs of each line differ (warp, runs in one only): {extra}")
        results.append((n, ran, found))
    if not all(np.array_equal(x, y, equal_nan=True) for x, y in zip(oa, ob)):
        results.append((-1, ran, ["outputs differ"]))
    return results
