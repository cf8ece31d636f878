import numpy as np


def spec(a, b, size):
    """out[0] is the dot product of a and b."""
    return np.array([np.dot(a, b)], dtype=np.float32)


def random_config(rng):
    """Any length from 1 to 8, always one block of 8 threads and a single output cell."""
    size = int(rng.integers(1, 9))
    return {
        "name": f"{size} element{'' if size == 1 else 's'}",
        "threads": [8],
        "blocks": [1],
        "shapes": {"out": [1], "a": [size], "b": [size]},
        "scalars": {"size": size},
    }
