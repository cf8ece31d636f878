import numpy as np


def spec(a, size):
    """Every element plus ten (`a` is size x size)."""
    return a + 10


def random_config(rng):
    """A square of side 1 to 12; blocks of 3x3 threads, just enough blocks in each direction."""
    size = int(rng.integers(1, 13))
    tpb = 3
    nb = (size + tpb - 1) // tpb
    return {
        "threads": [tpb, tpb],
        "blocks": [nb, nb],
        "shapes": {"out": [size, size], "a": [size, size]},
        "scalars": {"size": size},
    }
