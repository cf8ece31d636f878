import numpy as np

TPB = 8


def spec(a, size):
    """out[b] = sum(a[b*TPB:(b+1)*TPB]) for every block b."""
    blocks = (size + TPB - 1) // TPB
    return np.array([a[b * TPB : (b + 1) * TPB].sum() for b in range(blocks)], dtype=np.float32)


def random_config(rng):
    """Any length from 1 to 40, 8 threads per block, one output cell per block."""
    size = int(rng.integers(1, 41))
    blocks = (size + TPB - 1) // TPB
    return {
        "name": f"{size} element{'' if size == 1 else 's'}, {blocks} block{'' if blocks == 1 else 's'}",
        "threads": [TPB],
        "blocks": [blocks],
        "shapes": {"out": [blocks], "a": [size]},
        "scalars": {"size": size},
    }
