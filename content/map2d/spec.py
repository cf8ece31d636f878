import numpy as np


def spec(a, size):
    """Every element plus ten (`a` is size x size)."""
    return a + 10


def random_config(rng):
    """One block of 3x3 threads; the square array is between 1x1 and 3x3."""
    size = int(rng.integers(1, 4))
    return {
        "threads": [3, 3],
        "blocks": [1, 1],
        "shapes": {"out": [size, size], "a": [size, size]},
        "scalars": {"size": size},
    }
