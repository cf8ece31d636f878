"""Kernels to calibrate a modelled GPU time that counts instructions, not only memory (issue
"Scores and hints that mean what they say", part 2).

Today's model (tutor/engine/analysis/modelled_time.py) sees memory requests alone, so a correct
candidate that adds serial arithmetic keeps the score of the memory pattern it kept: nine such
candidates scored 1.5x to 83x over the naive kernel, and on an H100 six of them were slower than
it. A model that counts instructions must be fitted on a GPU against kernels that stress what it
counts. These are they, every one correct on every shape the verifier draws:

  naive, expert    each task's own kernels under kernels/<task>/, the baseline and the best known;
  compute_bound    the expert plus many threads of one block each doing thousands of independent
                   float32 FMAs (issue-bound on one SM, no memory traffic);
  latency_bound    the expert plus one long dependent chain in one thread: float64 sin, float64
                   sqrt and divide, or int64 multiply-modulo by a run-time divisor;
  divergent        the expert plus the 32 lanes of one warp each in a branch of its own (its own
                   source lines) of a dependent chain;
  local_memory     the expert plus a pointer chase through a cuda.local.array indexed at run time;
  finding          the issue's findings, reproduced as closely as their descriptions allow;
  honest           variants that a GPU should run faster than the naive kernel, so that a rank
                   correlation over each task means something.

The extra work never changes the answer: its result decides a term that is always exactly 0 (a
sine never passes 2, a remainder never reaches its divisor), which the compiler cannot know
without doing the work, added to a value that reaches out. Its size is set so that the simulator
verifies a kernel in well under 90 s (long chains sit in one thread; the simulator runs Python per
thread) while a GPU pays from a few microseconds to tens of milliseconds for it at the scored
shape, the shape bench/modelled_time.py runs on both. Each file's docstring says what it stresses
and what a GPU should do with it against the naive kernel, roughly.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
TASK_KERNELS = HERE.parents[2] / "kernels"
KINDS = ("naive", "expert", "compute_bound", "latency_bound", "divergent", "local_memory", "finding", "honest")

# task -> {file name under calibration/<task>/ (no .py): kind}; naive and expert come from kernels/.
CATALOGUE = {
    "reduce_sum": {
        "compute_bound": "compute_bound",
        "latency_bound": "latency_bound",
        "latency_bound_short": "latency_bound",
        "divergent": "divergent",
        "local_memory": "local_memory",
        "sin_chain_one_thread": "finding",
        "dependent_global_loads": "finding",
        "shared_tree": "honest",
        "expert_small_blocks": "honest",
    },
    "softmax": {
        "compute_bound": "compute_bound",
        "latency_bound": "latency_bound",
        "divergent": "divergent",
        "local_memory": "local_memory",
        "sqrt_divide_chain_per_row": "finding",
        "warp_per_row": "honest",
        "expert_four_items": "honest",
    },
    "layernorm": {
        "compute_bound": "compute_bound",
        "compute_bound_heavy": "compute_bound",
        "latency_bound": "latency_bound",
        "divergent": "divergent",
        "local_memory": "local_memory",
        "int64_mulmod_per_row": "finding",
        "warp_per_row": "honest",
        "expert_four_items": "honest",
    },
    "matmul": {
        "compute_bound": "compute_bound",
        "latency_bound": "latency_bound",
        "divergent": "divergent",
        "local_memory": "local_memory",
        "powf_chain": "finding",
        "tiled16": "honest",
        "four_columns": "honest",
        "unrolled_k64": "honest",
    },
    "attention": {
        "compute_bound": "compute_bound",
        "latency_bound": "latency_bound",
        "divergent": "divergent",
        "local_memory": "local_memory",
        "local_array_pointer_chase": "finding",
        "warp_per_row": "honest",
        "expert_wide_slices": "honest",
    },
    "attention_causal": {
        "compute_bound": "compute_bound",
        "latency_bound": "latency_bound",
        "divergent": "divergent",
        "local_memory": "local_memory",
        "powf_chain": "finding",
        "warp_per_row": "honest",
    },
    "attention_alibi": {
        "compute_bound": "compute_bound",
        "latency_bound": "latency_bound",
        "divergent": "divergent",
        "local_memory": "local_memory",
        "divergent_lanes_chain": "finding",
        "warp_per_row": "honest",
    },
    "attention_document": {
        "compute_bound": "compute_bound",
        "latency_bound": "latency_bound",
        "divergent": "divergent",
        "local_memory": "local_memory",
        "warp_per_row": "honest",
    },
}


def kernels() -> list[tuple[str, str, str, Path]]:
    """(task, name, kind, path) of every calibration kernel, task by task: the task's naive and
    expert kernels (kernels/<task>/), then its files here in the catalogue's order."""
    rows = []
    for task, files in CATALOGUE.items():
        rows += [(task, base, base, TASK_KERNELS / task / f"{base}.py") for base in ("naive", "expert")]
        rows += [(task, name, kind, HERE / task / f"{name}.py") for name, kind in files.items()]
    return rows
