"""A correct kernel passes: under every seed, on every config the puzzle's rule can draw.

The corpus in tests/honest/<puzzle>/<style>.py holds honest, correct solutions written the ways
learners write them (the textbook answer, a guarded variant, a tree, thread 0 in a loop, atomics
where the rules allow them), each within its puzzle's lesson: the technique its [require] names,
its budgets and its [perf] targets. Every one of them, and every content/<puzzle>/reference.py, must
pass our simulator's check on every seed below: size 1, a ragged last block, the largest launch. A
rule that cannot apply to a config (a block whose only element is its writer's own) must not be
judged there. A failure names the file, the seed, the config (threads, blocks, shapes, scalars)
and the failure's kind and message.

Cost: seeds are cheap, the simulator is not. Every seed of SEEDS runs; the seeds that follow are
added, per puzzle, until every edge case in EDGES has been drawn at least once (`runs_for`). The
puzzles in SLOW (thousands of simulated threads per launch) run their fixed configs once, on the
first seed, and then N_RANDOM_SLOW random configs per seed; the others run the whole check
(fixed configs and N_RANDOM random ones) on every seed.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from tutor.engine.judge import N_RANDOM, check_sim, configs_for
from tutor.puzzles import content_dir, load_catalog

HONEST = Path(__file__).resolve().parents[1] / "honest"
CATALOG = load_catalog()
SEEDS = tuple(range(20))
MORE_SEEDS = range(len(SEEDS), 20000)  # where an edge case not drawn by SEEDS is looked for

# 0.5 to 2 s a check each (256 threads a block, or 8 x 8 tiles over k): their fixed configs run on
# the first seed only, and each seed after it draws this many random configs.
SLOW = {"matmul_tiled", "attention_causal", "perf_copy", "perf_transpose_shared", "perf_transpose_padded",
        "perf_reduce_sequential", "perf_reduce_shuffle", "perf_histogram", "perf_matmul"}
N_RANDOM_SLOW = 1
# The watchdog is wall-clock: a check of perf_matmul (about 1 s of CPU) passed its 10 s default on a
# machine under a load of 16; every kernel here ends, so only a hang may stop it.
WALL_LIMIT = 120.0


def _dim(config, array, axis):
    return config.shapes[array][axis]


def _last_block_holds_one(length, per_block):
    return lambda c: length(c) > per_block and length(c) % per_block == 1


# What each puzzle's rule must be able to draw, and what the seeds below must have drawn: size 1
# wherever the launch rule allows it, the largest launch, a last block that holds a single element.
EDGES = {
    "map": {"4 elements": lambda c: c.scalars == {} and _dim(c, "a", 0) == 4},
    "zip": {"4 elements": lambda c: _dim(c, "a", 0) == 4},
    "guard": {"size 1": lambda c: c.scalars["size"] == 1, "size 8": lambda c: c.scalars["size"] == 8},
    "map2d": {"size 1": lambda c: c.scalars["size"] == 1, "size 3": lambda c: c.scalars["size"] == 3},
    "broadcast": {"size 1": lambda c: c.scalars["size"] == 1, "size 3": lambda c: c.scalars["size"] == 3},
    "blocks": {"size 1": lambda c: c.scalars["size"] == 1, "size 40": lambda c: c.scalars["size"] == 40,
               "last block of one": _last_block_holds_one(lambda c: c.scalars["size"], 4)},
    "blocks2d": {"size 1": lambda c: c.scalars["size"] == 1, "size 12": lambda c: c.scalars["size"] == 12,
                 "last blocks of one row": _last_block_holds_one(lambda c: c.scalars["size"], 3)},
    "shared": {"size 1": lambda c: c.scalars["size"] == 1, "size 40": lambda c: c.scalars["size"] == 40,
               "last block of one": _last_block_holds_one(lambda c: c.scalars["size"], 4)},
    "pooling": {"size 1": lambda c: c.scalars["size"] == 1, "size 2": lambda c: c.scalars["size"] == 2,
                "size 8": lambda c: c.scalars["size"] == 8},
    "dot": {"size 1": lambda c: c.scalars["size"] == 1, "size 8": lambda c: c.scalars["size"] == 8},
    "conv1d": {"a_size 1": lambda c: c.scalars["a_size"] == 1, "b_size 1": lambda c: c.scalars["b_size"] == 1,
               "b_size 4": lambda c: c.scalars["b_size"] == 4,
               "b longer than a": lambda c: c.scalars["b_size"] > c.scalars["a_size"],
               "last block of one": _last_block_holds_one(lambda c: c.scalars["a_size"], 8)},
    "prefix_sum": {"size 1": lambda c: c.scalars["size"] == 1, "size 40": lambda c: c.scalars["size"] == 40,
                   "last block of one": _last_block_holds_one(lambda c: c.scalars["size"], 8)},
    "axis_sum": {"size 1": lambda c: c.scalars["size"] == 1, "size 8": lambda c: c.scalars["size"] == 8,
                 "one row": lambda c: _dim(c, "a", 0) == 1,
                 "size 1, several rows": lambda c: c.scalars["size"] == 1 and _dim(c, "a", 0) > 1},
    "matmul": {"size 1": lambda c: c.scalars["size"] == 1, "size 10": lambda c: c.scalars["size"] == 10,
               "last blocks of one row": _last_block_holds_one(lambda c: c.scalars["size"], 3)},
    "transpose": {"rows 1": lambda c: c.scalars["rows"] == 1, "cols 1": lambda c: c.scalars["cols"] == 1,
                  "13 x 13": lambda c: c.scalars["rows"] == c.scalars["cols"] == 13},
    "scan_hillis_steele": {"size 1": lambda c: c.scalars["size"] == 1, "size 16": lambda c: c.scalars["size"] == 16},
    "scan_blelloch": {"size 1": lambda c: c.scalars["size"] == 1, "size 16": lambda c: c.scalars["size"] == 16},
    "warp_reduce": {"size 1": lambda c: c.scalars["size"] == 1, "size 128": lambda c: c.scalars["size"] == 128,
                    "last block of one": _last_block_holds_one(lambda c: c.scalars["size"], 32)},
    "histogram": {"size 1": lambda c: c.scalars["size"] == 1, "size 100": lambda c: c.scalars["size"] == 100,
                  "last block of one": _last_block_holds_one(lambda c: c.scalars["size"], 16)},
    "softmax_row": {"cols 1": lambda c: c.scalars["cols"] == 1, "cols 16": lambda c: c.scalars["cols"] == 16,
                    "one row": lambda c: _dim(c, "a", 0) == 1},
    "layernorm": {"cols 1": lambda c: c.scalars["cols"] == 1, "cols 16": lambda c: c.scalars["cols"] == 16,
                  "one row": lambda c: _dim(c, "a", 0) == 1},
    "matmul_tiled": {"m 1": lambda c: c.scalars["m"] == 1, "k 1": lambda c: c.scalars["k"] == 1,
                     "n 1": lambda c: c.scalars["n"] == 1,
                     "k past one tile": lambda c: c.scalars["k"] > 8,
                     "m and n past one tile": lambda c: c.scalars["m"] > 8 and c.scalars["n"] > 8},
    "attention_causal": {"size 1": lambda c: c.scalars["size"] == 1, "size 12": lambda c: c.scalars["size"] == 12},
    "perf_copy": {"under 300 values": lambda c: c.scalars["size"] < 300, "8 blocks": lambda c: list(c.blocks) == [8],
                  "a ragged end": lambda c: c.scalars["size"] % 256 != 0},
    "perf_transpose_shared": {"32 x 32": lambda c: c.scalars["rows"] == c.scalars["cols"] == 32,
                              "128 x 128": lambda c: c.scalars["rows"] == c.scalars["cols"] == 128,
                              "not square": lambda c: c.scalars["rows"] != c.scalars["cols"]},
    "perf_transpose_padded": {"32 x 32": lambda c: c.scalars["rows"] == c.scalars["cols"] == 32,
                              "128 x 128": lambda c: c.scalars["rows"] == c.scalars["cols"] == 128,
                              "not square": lambda c: c.scalars["rows"] != c.scalars["cols"]},
    "perf_reduce_sequential": {"last block of one": _last_block_holds_one(lambda c: c.scalars["size"], 256),
                               "12 blocks": lambda c: list(c.blocks) == [12]},
    "perf_reduce_shuffle": {"last block of one": _last_block_holds_one(lambda c: c.scalars["size"], 256),
                            "12 blocks": lambda c: list(c.blocks) == [12]},
    "perf_histogram": {"last block of one": _last_block_holds_one(lambda c: c.scalars["size"], 256),
                       "12 blocks": lambda c: list(c.blocks) == [12]},
    "perf_matmul": {"k 16": lambda c: c.scalars["k"] == 16, "k 17": lambda c: c.scalars["k"] == 17,
                    "k 32": lambda c: c.scalars["k"] == 32,
                    "m and n 32": lambda c: c.scalars["m"] == c.scalars["n"] == 32},
}


@dataclasses.dataclass(frozen=True)
class Run:
    """One check of a file: a seed, whether the puzzle's fixed configs run too, how many random ones."""

    seed: int
    fixed: bool
    n_random: int

    def puzzle(self, pid):
        puzzle = CATALOG.get(pid)
        return puzzle if self.fixed else dataclasses.replace(puzzle, configs=[])

    def configs(self, pid):
        return configs_for(self.puzzle(pid), self.seed, self.n_random)


def _run(pid, seed):
    if pid in SLOW:
        return Run(seed, fixed=seed == SEEDS[0], n_random=N_RANDOM if seed == SEEDS[0] else N_RANDOM_SLOW)
    return Run(seed, fixed=True, n_random=N_RANDOM)


@cache
def runs_for(pid) -> tuple[list[Run], dict]:
    """Every seed of SEEDS, then, for each edge case those missed, the first seed that draws it.
    Also: which run drew each edge case first (None where no seed of MORE_SEEDS did)."""
    runs = [_run(pid, s) for s in SEEDS]
    drawn = {}
    for edge, holds in EDGES[pid].items():
        drawn[edge] = next((r.seed for r in runs if any(holds(c) for c in r.configs(pid))), None)
        if drawn[edge] is None:
            extra = next((r for r in (_run(pid, s) for s in MORE_SEEDS) if any(holds(c) for c in r.configs(pid))),
                         None)
            if extra is not None:
                runs.append(extra)
                drawn[edge] = extra.seed
    return runs, drawn


def kernel_files():
    for pid in CATALOG.ids():
        yield pytest.param(pid, content_dir() / pid / "reference.py", id=f"{pid}-reference")
        for path in sorted((HONEST / pid).glob("*.py")):
            # a SLOW puzzle's other styles take about 10 s each: with the whole verifications (e2e),
            # which CI runs and README's command leaves out; its reference stays in every run
            marks = [pytest.mark.e2e] if pid in SLOW else []
            yield pytest.param(pid, path, id=f"{pid}-{path.stem}", marks=marks)


@pytest.mark.parametrize("pid, path", list(kernel_files()))
def test_an_honest_solution_passes_every_seed_and_every_config(pid, path):
    source = path.read_text()
    shown = path.relative_to(HONEST.parents[1] if path.is_relative_to(HONEST) else content_dir().parent)
    failed = []
    runs, _ = runs_for(pid)
    for run in runs:
        puzzle = run.puzzle(pid)
        verdict = check_sim(puzzle, source, str(shown), seed=run.seed, n_random=run.n_random, compile=False,
                            keep_traces=False, timeout=WALL_LIMIT).verdict
        if verdict.passed:
            continue
        # The verdict tells each mistake once, at its first config; every config that failed is named.
        launches = {c.name: c for c in verdict.configs}
        for failure in verdict.failures:
            failed.append(f"{shown} seed={run.seed} config {_describe(launches.get(failure.config), failure.config)}"
                          f"\n    {failure.kind}: {failure.message}")
        told = {f.config for f in verdict.failures}
        for config in verdict.configs:
            if not config.passed and config.name not in told:
                failed.append(f"{shown} seed={run.seed} config {_describe(config, config.name)}"
                              f"\n    failed too, with a failure told above for this seed")
    assert not failed, f"{len(failed)} failure(s) of an honest solution:\n" + "\n".join(failed)


def _describe(config, name) -> str:
    if config is None:
        return repr(name)
    return (f"{config.name!r} (threads {config.threads}, blocks {config.blocks}, shapes {config.shapes}, "
            f"scalars {config.scalars})")


def test_every_puzzle_has_honest_solutions_and_edge_cases():
    assert sorted(EDGES) == sorted(CATALOG.ids())
    missing = [pid for pid in CATALOG.ids() if not list((HONEST / pid).glob("*.py"))]
    assert missing == []
    strays = sorted(p.name for p in HONEST.iterdir() if p.is_dir() and p.name not in CATALOG.ids())
    assert strays == []


@pytest.mark.parametrize("pid, edge", [(pid, edge) for pid in EDGES for edge in EDGES[pid]])
def test_the_random_rule_draws_each_edge_case_and_the_seeds_run_it(pid, edge):
    """The launch rule can draw the case (size 1 where the puzzle's launch allows it, the largest,
    a last block of one element), and the runs of the test above include it."""
    puzzle = CATALOG.get(pid)
    rng = np.random.default_rng(2024)
    holds = EDGES[pid][edge]
    assert any(holds(puzzle.random_config(rng, 1)) for _ in range(5000)), f"{pid}: the rule never draws {edge}"
    _, drawn = runs_for(pid)
    assert drawn[edge] is not None, f"{pid}: no seed below {MORE_SEEDS.stop} draws {edge}"
