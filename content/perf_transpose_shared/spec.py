import numpy as np

TILE = 32


def spec(a, rows, cols):
    """The transpose: out[c, r] = a[r, c]."""
    return a.T.copy()


def random_config(rng):
    """rows and cols each 32, 64, 96 or 128 (whole tiles, so every warp's row is a full, aligned
    128 bytes); 32 x 8 threads per block; block x covers the columns of `a`, block y its rows."""
    rows = TILE * int(rng.integers(1, 5))
    cols = TILE * int(rng.integers(1, 5))
    return {
        "threads": [TILE, 8],
        "blocks": [cols // TILE, rows // TILE],
        "shapes": {"out": [cols, rows], "a": [rows, cols]},
        "scalars": {"rows": rows, "cols": cols},
    }
