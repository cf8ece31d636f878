"""[perf] targets: a right kernel that is slow for a hardware reason fails on the counter, and the
ways around a counter (dilution, atomics instead of loads, skipping the technique) are closed."""

from __future__ import annotations

import textwrap

import pytest

from tutor.engine.judge import check_sim
from tutor.engine.runner import Runner
from tutor.session import Session
from tutor.puzzles import ContentError, load_catalog

COPY_TOML = '''title = "Copy"
summary = "Copy a into out."
signature = ["out", "a", "size"]
constants = {{ CHUNK = 4 }}
hints = ["a", "b", "c"]

[perf]
{perf}

[[configs]]
name = "256 elements"
threads = [64]
blocks = [4]
shapes = {{ out = [256], a = [256] }}
scalars = {{ size = 256 }}
'''

SPEC = '''import numpy as np


def spec(a, size):
    return a.copy()


def random_config(rng):
    n = 64 * int(rng.integers(1, 4))
    return {"threads": [64], "blocks": [n // 64], "shapes": {"out": [n], "a": [n]}, "scalars": {"size": n}}
'''

COALESCED = '''
from numba import cuda


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    if i < size:
        out[i] = a[i]
'''

CHUNKED = '''
from numba import cuda

CHUNK = 4


@cuda.jit
def kernel(out, a, size):
    i = cuda.grid(1)
    for k in range(CHUNK):
        j = i * CHUNK + k
        if j < size:
            out[j] = a[j]
'''


def make_content(tmp_path, perf: str, toml: str = COPY_TOML, spec: str = SPEC, pid: str = "pcopy"):
    root = tmp_path / "content"
    (root / pid).mkdir(parents=True)
    (root / "manifest.toml").write_text(
        f'[[tracks]]\nid = "performance"\ntitle = "P"\ndescription = "d"\npuzzles = ["{pid}"]\n')
    folder = root / pid
    (folder / "puzzle.toml").write_text(toml.format(perf=perf))
    (folder / "spec.py").write_text(spec)
    for name, text in (("reference.py", COALESCED), ("starter.py", CHUNKED), ("lesson.md", "# Copy\n"),
                       ("learned.md", "Copied.\n")):
        (folder / name).write_text(text)
    return root


def check(root, source: str, pid: str = "pcopy"):
    puzzle = load_catalog(root).get(pid)
    return check_sim(puzzle, textwrap.dedent(source), seed=3, n_random=2, compile=False).verdict


def counters_missed(verdict) -> set:
    return {f.details[0]["counter"] for f in verdict.failures if f.kind == "perf_target"}


EFFICIENT = "global_load_efficiency = 1.0\nglobal_store_efficiency = 1.0"


def test_a_right_but_uncoalesced_copy_fails_on_both_counters_at_its_line(tmp_path):
    root = make_content(tmp_path, EFFICIENT)
    verdict = check(root, CHUNKED)
    assert not verdict.passed
    assert {f.kind for f in verdict.failures} == {"perf_target"}
    assert counters_missed(verdict) == {"global_load_efficiency", "global_store_efficiency"}
    load = next(f for f in verdict.failures if f.details[0]["counter"] == "global_load_efficiency")
    assert load.line == 13 and load.array == "a"  # `out[j] = a[j]`
    assert load.details[0]["value"] == pytest.approx(0.25) and load.details[0]["target"] == 1.0
    assert "25%" in load.message and "sectors" in load.message
    assert "global load efficiency 25% (target: at least 100%)" in " ".join(verdict.notes)
    fast = check(root, COALESCED)
    assert fast.passed and "global store efficiency 100% (target: at least 100%)" in " ".join(fast.notes)


def test_extra_coalesced_loads_cannot_dilute_an_efficiency_of_one(tmp_path):
    root = make_content(tmp_path, EFFICIENT)
    diluted = CHUNKED.replace("    i = cuda.grid(1)\n", "    i = cuda.grid(1)\n" + "    x = a[i % size]\n" * 12)
    verdict = check(root, diluted)
    assert "global_load_efficiency" in counters_missed(verdict)


def test_an_uncoalesced_copy_through_atomics_is_judged_as_loads_and_stores(tmp_path):
    """A first version counted loads only: reading `a` with atomic.add(a, j, 0) left no load to judge."""
    root = make_content(tmp_path, EFFICIENT)
    sneaky = CHUNKED.replace("out[j] = a[j]", "out[j] = cuda.atomic.add(a, j, 0)").replace(
        "    i = cuda.grid(1)\n", "    i = cuda.grid(1)\n    x = a[i % size]  # one coalesced load to be judged\n")
    verdict = check(root, sneaky)
    assert "global_load_efficiency" in counters_missed(verdict), [f.message for f in verdict.failures]


def test_a_wrong_and_slow_kernel_hears_about_its_output_only(tmp_path):
    root = make_content(tmp_path, EFFICIENT)
    verdict = check(root, CHUNKED.replace("out[j] = a[j]", "out[j] = a[j] + 1"))
    kinds = {f.kind for f in verdict.failures}
    assert "wrong_output" in kinds and "perf_target" not in kinds


def test_a_minimum_on_a_counter_that_never_happened_is_missed(tmp_path):
    """Lanes per shared request, at least 16, with no shared memory at all: nothing was met."""
    root = make_content(tmp_path, "shared_lanes_per_request = 16")
    verdict = check(root, COALESCED)
    assert counters_missed(verdict) == {"shared_lanes_per_request"}
    assert "no shared-memory requests" in verdict.failures[0].message


BANKS_TOML = '''title = "Tile"
summary = "Copy a 32 x 32 tile transposed."
signature = ["out", "a"]
hints = ["a", "b", "c"]

[perf]
{perf}

[[configs]]
name = "32 x 32"
threads = [32, 32]
blocks = [1, 1]
shapes = {{ out = [32, 32], a = [32, 32] }}
scalars = {{}}
'''

BANKS_SPEC = '''def spec(a):
    return a.T.copy()


def random_config(rng):
    return {"threads": [32, 32], "blocks": [1, 1], "shapes": {"out": [32, 32], "a": [32, 32]}, "scalars": {}}
'''

TILE = '''
import numba
from numba import cuda


@cuda.jit
def kernel(out, a):
    tile = cuda.shared.array((32, WIDTH), numba.float32)
    x = cuda.threadIdx.x
    y = cuda.threadIdx.y
    tile[y, x] = a[y, x]
    cuda.syncthreads()
    out[y, x] = tile[x, y]
'''


def test_bank_conflicts_and_a_total_target_from_an_expression(tmp_path):
    root = make_content(tmp_path, 'shared_extra_wavefronts = 0\nshared_requests = "warps * 2"',
                        toml=BANKS_TOML, spec=BANKS_SPEC, pid="tile")
    unpadded = check(root, TILE.replace("WIDTH", "32"), pid="tile")
    assert counters_missed(unpadded) == {"shared_extra_wavefronts"}
    conflict = unpadded.failures[0]
    assert conflict.line == 13 and conflict.details[0]["value"] == 32 * 31  # 32 requests, 32 words in one bank
    assert check(root, TILE.replace("WIDTH", "33"), pid="tile").passed
    # a third shared access per thread exceeds warps * 2 requests
    extra = TILE.replace("WIDTH", "33").replace("    out[y, x] = tile[x, y]", "    out[y, x] = tile[x, y] + tile[y, x] * 0")
    assert counters_missed(check(root, extra, pid="tile")) == {"shared_requests"}


def test_the_judge_in_the_parent_reads_the_counters_the_child_measured(tmp_path, monkeypatch):
    """The app and the CLI judge in the parent; the child's trace never crosses. The content folder
    named by GPU_TUTOR_CONTENT reaches the child too (its environment is cleared)."""
    root = make_content(tmp_path, EFFICIENT)
    monkeypatch.setenv("GPU_TUTOR_CONTENT", str(root))
    with Runner("sim", session=Session.from_environment()) as runner:  # as an entry point reads it
        slow = runner.check("pcopy", CHUNKED, "starter.py", seed=1, n_random=1, keep_traces=False, compile=False)
        fast = runner.check("pcopy", COALESCED, "reference.py", seed=1, n_random=1, keep_traces=False, compile=False)
    assert counters_missed(slow.verdict) == {"global_load_efficiency", "global_store_efficiency"}
    assert fast.verdict.passed
    assert fast.verdict.configs[0].counters["lens"]["global_load_efficiency"]["value"] == 1.0


@pytest.mark.parametrize("perf, said", [
    ("sectors_per_request = 4", "is not a counter target"),
    ("arithmetic_intensity = 2.0", "needs flops"),
    ("global_atomics = true", "must be a number or an expression"),
    ('global_atomics = "blocks * BINS"', "unknown name 'BINS'"),
])
def test_a_malformed_perf_table_is_refused_with_its_key(tmp_path, perf, said):
    root = make_content(tmp_path, perf)
    with pytest.raises(ContentError, match=said):
        load_catalog(root)


def test_intensity_is_the_declared_flops_over_the_bytes_served(tmp_path):
    root = make_content(tmp_path, 'flops = "size"\narithmetic_intensity = 0.2')
    verdict = check(root, COALESCED)  # 256 elements, 2 kB served: 1/8 FLOP per byte
    assert counters_missed(verdict) == {"arithmetic_intensity"}
    f = verdict.failures[0]
    assert f.details[0]["value"] == pytest.approx(256 / 2048) and "2,048 bytes" in f.message
