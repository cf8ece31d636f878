import numpy as np


def spec(a, size):
    """Every element plus 10."""
    return (a + 10).astype(np.float32)


def random_config(rng):
    """Any length from 1 to 40, 4 threads per block, as many blocks as needed."""
    size = int(rng.integers(1, 41))
    return {
        "name": f"{size} element{'' if size == 1 else 's'}",
        "threads": [4],
        "blocks": [(size + 3) // 4],
        "shapes": {"out": [size], "a": [size]},
        "scalars": {"size": size},
    }
