"""The lanes (sim/lanes.py) against the thread-by-thread simulator: the same trace, event for
event, the same barriers, arrays, failures and outputs, for every kernel file the suite holds
(references, starters, honest solutions, beginners' mistakes, performance attacks) on the
puzzles' fixed and random configs, and for the coaching tasks' kernels, traced and as the verifier
runs them: the lines that ran, and each warp's runs of each line (the modelled time's count)."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

from lanes_pair import compare_module, compare_source
from tutor.engine.task_child import FILENAME
from tutor.engine.judge import configs_for, fresh_output, make_inputs
from tutor.puzzles import load_catalog

ROOT = pathlib.Path(__file__).resolve().parents[2]
CATALOG = load_catalog()


def _wrong_solutions() -> dict:
    spec = importlib.util.spec_from_file_location("wrong_solutions", ROOT / "tests/content/test_wrong_solutions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out: dict = {}
    for param in module.WRONG:
        pid, _kind, source, _seed = param.values
        out.setdefault(pid, []).append((param.id, source))
    return out


WRONG = _wrong_solutions()


def files_of(pid: str) -> list:
    puzzle = CATALOG.get(pid)
    files = [("reference", puzzle.reference), ("starter", puzzle.starter)]
    for folder in ("honest", "perf_attacks", "perf_attacks_open"):
        for path in sorted((ROOT / "tests" / folder / pid).glob("*.py")):
            files.append((f"{folder}/{path.name}", path.read_text()))
    return files + WRONG.get(pid, [])


def launches_of(pid: str, seed: int) -> list:
    puzzle = CATALOG.get(pid)
    out = []
    for n, config in enumerate(configs_for(puzzle, seed)):
        inputs, _ = make_inputs(puzzle, config, np.random.default_rng(seed * 100 + n))
        named = [("out", fresh_output(config))] + list(inputs.items())
        out.append((config.name, tuple(config.blocks), tuple(config.threads), named))
    return out


@pytest.mark.parametrize("pid", [p.id for p in CATALOG.ordered()])
def test_every_kernel_file_of_a_puzzle_gives_the_same_trace_as_lanes(pid):
    launches = launches_of(pid, seed=1)
    differ, ran = [], 0
    for name, source in files_of(pid):
        try:
            results = compare_source(source, launches)
        except Exception as e:  # a file the loader refuses is refused the same on both
            if "lanes" in repr(e):
                raise
            continue
        for label, fallback, found in results:
            ran += fallback is None
            differ += [f"{name} / {label}: {d}" for d in found]
    assert not differ, "\n".join(differ)
    assert ran > 0 or pid in NO_LANES, f"no launch of {pid} ran as lanes"


# Puzzles whose every kernel uses what the lanes do not model (warp primitives)
NO_LANES = {"warp_reduce", "perf_reduce_shuffle"}


def test_the_big_references_run_as_lanes_on_every_config():
    """So that the comparison above is not passed by always falling back."""
    for pid in ("map", "dot", "matmul", "matmul_tiled", "perf_matmul", "perf_transpose_padded",
                "attention_causal", "softmax_row", "layernorm", "histogram", "perf_histogram", "scan_blelloch"):
        for label, fallback, found in compare_source(CATALOG.get(pid).reference, launches_of(pid, seed=2)):
            assert fallback is None and not found, (pid, label, fallback, found)


TASKS = sorted(p.name for p in (ROOT / "kernels").iterdir() if (p / "task.toml").exists())


@pytest.mark.parametrize("task", TASKS)
def test_the_coaching_tasks_kernels_give_the_same_traces(task):
    _same_for_the_tasks_kernels(task, scored=False)


@pytest.mark.e2e  # the scored shapes thread by thread, each line followed: a minute or two
@pytest.mark.parametrize("task", TASKS)
def test_the_coaching_tasks_kernels_give_the_same_runs_of_lines_at_the_scored_shape(task):
    _same_for_the_tasks_kernels(task, scored=True)


def _same_for_the_tasks_kernels(task, scored: bool):
    import tomllib

    folder = ROOT / "kernels" / task
    spec = tomllib.loads((folder / "task.toml").read_text())
    inputs_spec = importlib.util.spec_from_file_location(f"inputs_{task}", folder / "inputs.py")
    inputs_mod = importlib.util.module_from_spec(inputs_spec)
    inputs_spec.loader.exec_module(inputs_mod)
    differ, lanes_ran = [], {False: 0, True: 0}
    for which in ("naive", "expert"):
        path = folder / f"{which}.py"
        if not path.exists():
            continue
        for shape in ([spec["sim_scored"]] if "sim_scored" in spec else []) if scored else spec["sim_shapes"]:
            arrays = inputs_mod.make_inputs(np.random.default_rng(5), shape)

            def call(ns, arrays=arrays, shape=shape):
                out = np.zeros(inputs_mod.output_shape(shape), dtype=np.float32)
                ns["launch"](out, *[a.copy() for a in arrays])
                return [out]

            # traced; as the verifier runs (the lines that ran followed); and as it runs where it models
            # the time (each warp's runs of each line counted too)
            for how in ("traced", "verifier", "model"):
                for n, ran, found in compare_module(path.read_text(), call, filename=FILENAME,
                                                    verifier=how != "traced", model=how == "model"):
                    differ += [f"{which} {shape} launch {n} ({how}): {d}" for d in found]
                    lanes_ran[how != "traced"] += ran if n == 0 else 0
    assert not differ, "\n".join(differ)
    # the verifier's runs (local arrays untraced) run as lanes: naive and expert, every shape
    if not scored:
        assert lanes_ran[True] >= 2 * len(spec["sim_shapes"]), lanes_ran
