"""The classic track keeps the Content issue's contract exactly: ids, signatures, constants,
fixed configs (input shapes; threads; blocks) and per-thread budgets."""

import pytest

# The first seven had no budget; a thread that looped over the whole array then passed them without
# the one-thread-per-element idea they teach. Their budgets are what the canonical answers use.
ONE_PER_THREAD = {"global_reads": 1, "global_writes": 1}
TWO_IN_ONE_OUT = {"global_reads": 2, "global_writes": 1}

CONTRACT = {
    "map": ("out a", {}, [({"a": (4,)}, {}, (4,), (1,))], ONE_PER_THREAD),
    "zip": ("out a b", {}, [({"a": (4,), "b": (4,)}, {}, (4,), (1,))], TWO_IN_ONE_OUT),
    "guard": ("out a size", {}, [({"a": (4,)}, {"size": 4}, (8,), (1,))], ONE_PER_THREAD),
    "map2d": ("out a size", {}, [({"a": (2, 2)}, {"size": 2}, (3, 3), (1, 1))], ONE_PER_THREAD),
    "broadcast": ("out a b size", {}, [({"a": (2, 1), "b": (1, 2), "out": (2, 2)}, {"size": 2}, (3, 3), (1, 1))],
                  TWO_IN_ONE_OUT),
    "blocks": ("out a size", {}, [({"a": (9,)}, {"size": 9}, (4,), (3,))], ONE_PER_THREAD),
    "blocks2d": ("out a size", {}, [({"a": (5, 5)}, {"size": 5}, (3, 3), (2, 2))], ONE_PER_THREAD),
    "shared": ("out a size", {"TPB": 4}, [({"a": (8,)}, {"size": 8}, (4,), (2,))],
               {"global_reads": 1, "global_writes": 1}),
    "pooling": ("out a size", {"TPB": 8}, [({"a": (8,)}, {"size": 8}, (8,), (1,))],
                {"global_reads": 1, "global_writes": 1}),
    "dot": ("out a b size", {"TPB": 8}, [({"a": (8,), "b": (8,), "out": (1,)}, {"size": 8}, (8,), (1,))],
            {"global_reads": 2, "global_writes": 1}),
    "conv1d": ("out a b a_size b_size", {"TPB": 8, "MAX_CONV": 4, "TPB_MAX_CONV": 12},
               [({"a": (6,), "b": (3,)}, {"a_size": 6, "b_size": 3}, (8,), (1,)),
                ({"a": (15,), "b": (4,)}, {"a_size": 15, "b_size": 4}, (8,), (2,))],
               {"global_reads": 2, "global_writes": 1}),
    "prefix_sum": ("out a size", {"TPB": 8}, [({"a": (8,), "out": (1,)}, {"size": 8}, (8,), (1,)),
                                               ({"a": (15,), "out": (2,)}, {"size": 15}, (8,), (2,))],
                   {"global_reads": 1, "global_writes": 1}),
    "axis_sum": ("out a size", {"TPB": 8}, [({"a": (4, 6), "out": (4, 1)}, {"size": 6}, (8,), (1, 4))],
                 {"global_reads": 1, "global_writes": 1}),
    "matmul": ("out a b size", {"TPB": 3}, [({"a": (2, 2), "b": (2, 2)}, {"size": 2}, (3, 3), (1, 1)),
                                             ({"a": (8, 8), "b": (8, 8)}, {"size": 8}, (3, 3), (3, 3))],
               {"global_reads": "2 * ceil(size / TPB)", "global_writes": 1}),
}


def test_classic_track_order(catalog):
    classic = next(t for t in catalog.tracks if t.id == "classic")
    assert classic.puzzles == list(CONTRACT)


@pytest.mark.parametrize("pid", list(CONTRACT))
def test_classic_puzzle_keeps_the_contract(catalog, pid):
    signature, constants, configs, budget = CONTRACT[pid]
    p = catalog.get(pid)
    assert p.signature == signature.split()
    assert p.constants == constants
    assert p.budget == budget
    assert len(p.configs) == len(configs)
    for got, (shapes, scalars, threads, blocks) in zip(p.configs, configs):
        for name, shape in shapes.items():
            assert got.shapes[name] == shape
        assert got.scalars == scalars and got.threads == threads and got.blocks == blocks


def test_matmul_budget_grows_with_size(catalog):
    p = catalog.get("matmul")
    assert [p.budget_for(c)["global_reads"] for c in p.configs] == [2, 6]
