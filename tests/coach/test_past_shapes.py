"""Kernels wrong only past the shapes the simulator used to verify: each file of past_shapes/ is a
candidate of the kind a model wrote through the optimiser (a branch on a size, a fixed window, a
slope table), right on the fixed shapes and on what the drawn shapes reached before, wrong past a
size it may branch on: heads past 2, head dimensions past 64, 256 keys, documents longer than a
tile, rows past 16,384 columns, matrices past 256, sums past one wave of a GPU's threads. Its
docstring says what is wrong and where.

The task's `[[sim_random]]` rules (one per regime) and inputs (attention_document's documents) must
reach each of those sizes at every verification, not at most of them: every candidate is verified
RUNS times, from fresh seeds, and rejected for its output every time. Each is first verified on the
fixed shapes of before (the attention tasks' had no H = 3) and the scored shape alone, where it
must pass: what rejects it is the shapes added since.

Every candidate is verified several times, each verification a whole one at every regime's shape,
so the module is e2e (README's command leaves it out; CI runs it). The attention candidates keep
SLOW_TIMEOUT, so that what is judged is their output, not a loaded machine's speed: the verifier
samples blocks at large shapes, but a candidate whose sampled blocks cannot have written every cell
of out has every block run (task_child._could_cover), and several of these are such candidates.
"""

from pathlib import Path
from unittest import mock

import pytest

from tutor.coach import tasks as task_module
from tutor.coach.verify import DEFAULT_TIMEOUT, verify

# whole verifications at every regime's shape, twice each: long (README's command leaves e2e out, CI runs it)
pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent / "past_shapes"
RUNS = 2
OUTPUT_FAILURES = {"wrong_output", "not_finite"}

# candidate file (past_shapes/NAME.py) -> its task
CANDIDATES = {
    "attention_alibi_paper_slopes": "attention_alibi",
    "attention_causal_wide_rescale": "attention_causal",
    "attention_causal_row_block": "attention_causal",
    "attention_document_one_tile_lookback": "attention_document",
    "attention_narrow_head_only": "attention",
    "softmax_registers_only": "softmax",
    "layernorm_variance_without_tail": "layernorm",
    "matmul_whole_tiles_when_large": "matmul",
    "reduce_sum_one_wave": "reduce_sum",
}
# The fixed simulator shapes before heads past 2 were drawn, where they differ from today's.
FIXED_BEFORE = {task: [(1, 1, 1, 4), (1, 2, 5, 8), (2, 1, 9, 8)]
                for task in ("attention", "attention_alibi", "attention_causal", "attention_document")}
SLOW = {name for name, task in CANDIDATES.items() if task.startswith("attention")}
SLOW_TIMEOUT = 600.0


def _marked(names):
    return [pytest.param(n, marks=pytest.mark.e2e) if n in SLOW else n for n in names]


# What one verification's drawn shapes must reach, whatever the seed: each a test of the shapes.
ATTENTION = [lambda B, H, S, D: H % 2 and H >= 3, lambda B, H, S, D: D > 64 and S > 112,
             lambda B, H, S, D: S > 256]
ROWS = [lambda rows, cols: cols >= 16500]
REGIMES = {"attention": ATTENTION, "attention_alibi": ATTENTION, "attention_causal": ATTENTION,
           "attention_document": ATTENTION, "softmax": ROWS, "layernorm": ROWS,
           "matmul": [lambda m, k, n: m > 256 and n > 256, lambda m, k, n: k > 256],
           "reduce_sum": [lambda n: n > 135168]}


@pytest.mark.parametrize("task", sorted(REGIMES))
def test_every_verification_draws_a_shape_in_every_regime(task):
    import numpy as np

    spec = task_module.load_task(task)
    for seed in range(50):
        shapes = spec.random_shapes(np.random.default_rng(seed))
        for regime in REGIMES[task]:
            assert any(regime(*shape) for shape in shapes), (seed, shapes)


def test_documents_run_from_one_position_to_the_whole_sequence():
    """Row 0 of a batch holds one long document (past 128 positions where S > 129) among tiny ones,
    row 1 a single document, row 2 tiny ones only: every drawn shape has a row 0, so every
    verification has a document longer than any tile and documents of one position."""
    import numpy as np

    spec = task_module.load_task("attention_document")
    inputs = spec.module("inputs")
    for seed in range(50):
        rng = np.random.default_rng(seed)
        for shape in [(3, 1, 9, 4)] + spec.random_shapes(rng):
            S = shape[2]
            doc = inputs.make_inputs(rng, shape)[3]
            assert (np.diff(doc, axis=1) >= 0).all()
            lengths = [np.unique(row, return_counts=True)[1] for row in doc]
            assert lengths[0].max() >= (129 if S > 129 else (S + 1) // 2) and lengths[0].min() <= 3
            assert len(lengths[0]) >= 2
            if len(doc) > 1:
                assert list(lengths[1]) == [S]
            if len(doc) > 2:
                assert lengths[2].max() <= 4


def test_every_file_of_the_corpus_is_listed():
    assert sorted(p.stem for p in HERE.glob("*.py")) == sorted(CANDIDATES)


@pytest.mark.parametrize("name", _marked(CANDIDATES))
def test_a_kernel_wrong_past_the_old_shapes_is_rejected_for_its_output_at_every_verification(name):
    task, source = CANDIDATES[name], (HERE / f"{name}.py").read_text()
    timeout = SLOW_TIMEOUT if name in SLOW else DEFAULT_TIMEOUT
    fixed = task_module.load_task(task).shapes("sim")
    with mock.patch.object(task_module.Task, "random_shapes", lambda self, rng: []), \
            mock.patch.object(task_module.Task, "shapes", lambda self, backend: FIXED_BEFORE.get(task, fixed)):
        before = verify(task, source, timeout=timeout)
    assert before.passed, [f.to_json() for f in before.failures]
    for run in range(RUNS):
        verdict = verify(task, source, timeout=timeout)
        kinds = {f.kind for f in verdict.failures}
        failures = [f.to_json() for f in verdict.failures]
        assert not verdict.passed and kinds and kinds <= OUTPUT_FAILURES, (run, failures)
