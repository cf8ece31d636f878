import numpy as np


def spec(a, b, size):
    """numpy broadcasting: a column (size x 1) plus a row (1 x size) is a size x size square."""
    return a + b


def random_config(rng):
    """One block of 3x3 threads; `size` between 1 and 3."""
    size = int(rng.integers(1, 4))
    return {
        "threads": [3, 3],
        "blocks": [1, 1],
        "shapes": {"out": [size, size], "a": [size, 1], "b": [1, size]},
        "scalars": {"size": size},
    }


def make_inputs(rng, shapes, scalars):
    """Integers in [-9, 9] as float32, redrawn in the rare case that every sum is 0
    (an all-zero answer would let a kernel that writes nothing pass)."""
    while True:
        a = rng.integers(-9, 10, size=shapes["a"]).astype(np.float32)
        b = rng.integers(-9, 10, size=shapes["b"]).astype(np.float32)
        if np.any(a + b != 0):
            return {"a": a, "b": b}
