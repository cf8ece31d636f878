import numpy as np

TILE = 16


def spec(a, b, m, k, n):
    """The matrix product a @ b, shape (m, n)."""
    return a @ b


def random_config(rng):
    """m and n each 16, 24 or 32, k from 16 to 32; 16 x 16 threads per block; block x covers the
    columns of `out` (n), block y its rows (m). Rows and columns in whole halves of a tile keep
    every block's tiles used enough for the target to mean tiling (a block with 1 row of `out`
    would reuse its `b` tile once); on these shapes the reference measures 1.79 (24 x 17 x 24)
    to 3.2 flops per byte, the starter 0.41 to 0.49. At most four tile steps in all (blocks
    times steps along k), which keeps the simulator quick: a grid of four blocks has k = 16."""
    while True:
        m, n = (8 * int(v) for v in rng.integers(2, 5, size=2))
        k = int(rng.integers(16, 33))
        blocks = [-(-n // TILE), -(-m // TILE)]
        if blocks[0] * blocks[1] * -(-k // TILE) <= 4:
            break
    return {
        "threads": [TILE, TILE],
        "blocks": blocks,
        "shapes": {"out": [m, n], "a": [m, k], "b": [k, n]},
        "scalars": {"m": m, "k": k, "n": n},
    }
