import numpy as np


def spec(a, size):
    """out[r, 0] = sum(a[r, :])."""
    return a.sum(axis=1, keepdims=True).astype(np.float32)


def random_config(rng):
    """1 to 6 rows (one block each, stacked along y), 1 to 8 columns, 8 threads per block."""
    rows = int(rng.integers(1, 7))
    size = int(rng.integers(1, 9))
    return {
        "name": f"{rows} row{'' if rows == 1 else 's'} of {size}",
        "threads": [8],
        "blocks": [1, rows],
        "shapes": {"out": [rows, 1], "a": [rows, size]},
        "scalars": {"size": size},
    }
