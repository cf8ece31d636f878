"""A served room of 30 simulated learners, written by the real app's store with real verdicts.

Each learner's folder is what `gpu-tutor serve` gives a browser (DATA/learners/NAME: learner.json,
state.json, code/): their runs go through `Store.record_run` with the summary the app keeps
(misconceptions.failure_summary) of the verdict our simulator's judge gave their kernel. The kernels
are the beginners' mistakes of tests/content/test_wrong_solutions.py, some rewritten the way
different learners write the same line (another name for the index, cuda.threadIdx.x inline), so
that one mistake must cluster as one whatever its spelling, and two mistakes of one kind apart.

The room, by design (what the tests count on):
- dot, no barrier between the products and thread 0's sum: 12 learners, in three spellings;
- dot, every thread adding into out[0] (also a race, another mistake): 3;
- guard, no guard (out of bounds): 5; map, adds 1 not 10 (wrong output): 3;
- shared, the barrier inside the guard (barrier divergence): 2;
- solved everything they opened: 2; never opened anything: 3 (30 in all).
Two of the dot learners last ran their code 15 minutes before NOW but are still at it (idle);
some took hints.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from tutor.store import Store, iso_time
from tutor.workshop.misconceptions import failure_summary

NOW = 1_796_558_400.0  # 2026-12-06 12:00 UTC: the moment the fixture's facilitator looks
PUZZLES = ["map", "guard", "shared", "dot"]
TITLE = "GPU puzzles, Sunday morning"


def _wrong(pid: str, name: str) -> str:
    from tests.content.test_wrong_solutions import WRONG

    for param in WRONG:
        if param.id == f"{pid}-{name}":
            return param.values[2]
    raise KeyError(f"{pid}-{name}")


def kernels() -> dict[str, tuple[str, str]]:
    """name -> (puzzle, source)."""
    dot = _wrong("dot", "no_barrier")
    out = {
        "dot_no_barrier": ("dot", dot),
        "dot_no_barrier_tid": ("dot", dot.replace("local_i", "tid")),
        "dot_no_barrier_inline": ("dot", dot.replace("    local_i = cuda.threadIdx.x\n", "")
                                  .replace("cache[local_i]", "cache[cuda.threadIdx.x]")
                                  .replace("if local_i == 0", "if cuda.threadIdx.x == 0")),
        "dot_adds_into_out": ("dot", _wrong("dot", "every_thread_adds_into_out0")),
        "guard_no_guard": ("guard", _wrong("guard", "no_guard")),
        "map_adds_one": ("map", _wrong("map", "adds_one_not_ten")),
        "shared_barrier_in_guard": ("shared", _wrong("shared", "barrier_inside_the_guard")),
    }
    from tutor.puzzles import load_catalog

    catalog = load_catalog()
    for pid in PUZZLES:
        out[f"{pid}_reference"] = (pid, catalog.get(pid).reference)
    return out


@functools.lru_cache(maxsize=None)
def verdict_of(name: str):
    """(passed, failure summary) of a kernel, judged by our simulator (seeded, so every run of the
    tests sees the same verdict)."""
    from tutor.engine.judge import check_sim
    from tutor.puzzles import load_catalog

    pid, source = kernels()[name]
    result = check_sim(load_catalog().get(pid), source, seed=1, compile=False, keep_traces=False)
    v = result.verdict
    return v.passed, (None if v.passed else failure_summary(v.failures, source))


class Clock:
    def __init__(self, t: float):
        self.t = t

    def __call__(self) -> float:
        return self.t


def learner(root: Path, folder: str, name: str | None, plan: list[tuple], *, closed: bool = False) -> Path:
    """A learner's folder after `plan`: steps (minutes before NOW, what, puzzle or kernel name, ...).
    what: "open" puzzle | "run" kernel | "hint" puzzle level | "ai" puzzle."""
    data = root / "learners" / folder
    data.mkdir(parents=True, exist_ok=True)
    (data / "learner.json").write_text(json.dumps({"id": f"learner-{folder}", "name": name}), encoding="utf-8")
    clock = Clock(NOW - 3600)
    store = Store(data, clock=clock)
    for minutes, what, *rest in plan:
        clock.t = NOW - minutes * 60
        if what == "open":
            store.record_open(rest[0])
        elif what == "run":
            pid, source = kernels()[rest[0]]
            store.save_code(pid, source)
            passed, summary = verdict_of(rest[0])
            store.record_run(pid, passed, summary)
        elif what == "hint":
            store.record_hint(rest[0], rest[1])
        elif what == "ai":
            store.record_hint(rest[0], 1, ai=True)
    if closed:
        store.record_close(clock.t)
    else:
        store.flush_activity(clock.t)
    return data


def _working_on(kernel: str, puzzle: str, start: float, last_run: float, *, hint: int = 0) -> list[tuple]:
    """Opened `puzzle` at `start` minutes before NOW, typed and ran every few minutes, last at `last_run`."""
    plan = [(start, "open", puzzle)]
    t = start
    while t - 3 > last_run:
        t -= 3
        plan.append((t, "run", kernel))
    if hint:
        plan.append((t - 0.5, "hint", puzzle, hint))
    plan.append((last_run, "run", kernel))
    return plan


def build_room(root: Path) -> Path:
    """The room above, under `root` (a served room's DATA). Returns root."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "room.json").write_text(json.dumps({"format": "gpu-tutor-room", "title": TITLE, "puzzles": PUZZLES,
                                                "workshop": None}), encoding="utf-8")
    n = 0

    def seat(plan, name=True, **kw):
        nonlocal n
        n += 1
        return learner(root, f"s{n:02d}", f"Learner {n:02d}" if name else None, plan, **kw)

    solved_map = [(58, "open", "map"), (55, "run", "map_reference")]
    spellings = ["dot_no_barrier", "dot_no_barrier_tid", "dot_no_barrier_inline"]
    for k in range(12):  # the room's big one: dot without a barrier
        last = 15.5 if k < 2 else 1 + k % 4  # two have not run for a quarter of an hour
        plan = solved_map + [(50, "open", "dot")] + _working_on(spellings[k % 3], "dot", 49, last, hint=k % 3)
        if k < 2:
            plan.append((1, "hint", "dot", 1))  # still at it: a key, a hint
        seat(plan)
    for k in range(3):
        seat(solved_map + _working_on("dot_adds_into_out", "dot", 40, 2 + k))
    for k in range(5):
        seat(_working_on("guard_no_guard", "guard", 30 - k, 1 + k, hint=2 if k == 0 else 0))
    for k in range(3):
        seat(_working_on("map_adds_one", "map", 20, 2 + k))
    for k in range(2):
        seat(solved_map + _working_on("shared_barrier_in_guard", "shared", 35, 3 + k) + [(2, "ai", "shared")])
    for k in range(2):
        seat(solved_map + [(40, "open", "guard"), (36, "run", "guard_reference")], closed=True)
    for k in range(3):
        seat([], name=k != 0)
    assert n == 30
    return root


def at(minutes: float) -> str:
    return iso_time(NOW - minutes * 60)
