import numpy as np

TPB = 64
CHUNK = 4


def spec(a, size):
    """A copy: out[k] = a[k]."""
    return a.copy()


def random_config(rng):
    """256 to 2048 values; 64 threads per block, and just enough blocks for every thread to copy
    CHUNK values: ceil(size / 256). Large enough that every warp's requests span many sectors."""
    size = int(rng.integers(256, 2049))
    blocks = -(-size // (TPB * CHUNK))
    return {"threads": [TPB], "blocks": [blocks],
            "shapes": {"out": [size], "a": [size]}, "scalars": {"size": size}}
