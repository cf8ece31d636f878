import numpy as np

TILE = 8


def spec(a, b, m, k, n):
    """The matrix product a @ b, shape (m, n)."""
    return a @ b


def random_config(rng):
    """Random m, k, n from 1 to 20; 8 x 8 threads per block; block x covers the rows of `out`
    (m) and block y its columns (n), so the grid is ceil(m / 8) by ceil(n / 8)."""
    m, k, n = (int(v) for v in rng.integers(1, 21, size=3))
    return {
        "threads": [TILE, TILE],
        "blocks": [-(-m // TILE), -(-n // TILE)],
        "shapes": {"out": [m, n], "a": [m, k], "b": [k, n]},
        "scalars": {"m": m, "k": k, "n": n},
    }
