import numpy as np

TILE = 4


def spec(a, rows, cols):
    """The transpose: out[c, r] = a[r, c]."""
    return a.T.copy()


def random_config(rng):
    """A random (rows, cols) from 1 to 13; 4 x 4 threads per block; block x covers the columns of
    `a` and block y its rows, so the grid is ceil(cols / 4) by ceil(rows / 4)."""
    rows = int(rng.integers(1, 14))
    cols = int(rng.integers(1, 14))
    return {
        "threads": [TILE, TILE],
        "blocks": [-(-cols // TILE), -(-rows // TILE)],
        "shapes": {"out": [cols, rows], "a": [rows, cols]},
        "scalars": {"rows": rows, "cols": cols},
    }
