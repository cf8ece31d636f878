import numpy as np


def spec(a, size):
    """Every element plus ten (`size` is the length of `a`)."""
    return a + 10


def random_config(rng):
    """Any length from 1 to 40; blocks of 4 threads, just enough blocks to cover the array."""
    size = int(rng.integers(1, 41))
    tpb = 4
    return {
        "threads": [tpb],
        "blocks": [(size + tpb - 1) // tpb],
        "shapes": {"out": [size], "a": [size]},
        "scalars": {"size": size},
    }
