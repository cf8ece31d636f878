import numpy as np


def spec(a, b, size):
    """The matrix product of a and b."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def random_config(rng):
    """Any size from 1 to 10; 3 x 3 threads per block and enough blocks to cover the matrix."""
    size = int(rng.integers(1, 11))
    n = (size + 2) // 3
    return {
        "name": f"{size} x {size}",
        "threads": [3, 3],
        "blocks": [n, n],
        "shapes": {"out": [size, size], "a": [size, size], "b": [size, size]},
        "scalars": {"size": size},
    }
