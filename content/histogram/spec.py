import numpy as np

BINS = 8


def spec(a, size):
    """out[k] = how many values of `a` equal k, for k in 0 .. BINS-1."""
    return np.bincount(a, minlength=BINS).astype(np.int32)


def random_config(rng):
    """16 threads per block, as many blocks as needed for 1 to 100 values."""
    size = int(rng.integers(1, 101))
    blocks = (size + 15) // 16
    return {"threads": [16], "blocks": [blocks],
            "shapes": {"out": [BINS], "a": [size]}, "scalars": {"size": size},
            "dtypes": {"a": "int32", "out": "int32"}}


def make_inputs(rng, shapes, scalars):
    """Values in [0, BINS). Half the time they crowd into a few bins, so that many
    threads collide on the same counter."""
    if rng.random() < 0.5:
        high = BINS
    else:
        high = int(rng.integers(1, 3))
    return {"a": rng.integers(0, high, size=shapes["a"]).astype(np.int32)}
