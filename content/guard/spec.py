import numpy as np


def spec(a, size):
    """Every element plus ten (`size` is the length of `a`)."""
    return a + 10


def random_config(rng):
    """One block of 8 threads; the array holds between 1 and 8 elements."""
    size = int(rng.integers(1, 9))
    return {
        "threads": [8],
        "blocks": [1],
        "shapes": {"out": [size], "a": [size]},
        "scalars": {"size": size},
    }
