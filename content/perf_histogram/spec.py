import numpy as np

BINS = 32
TPB = 256


def spec(a, size):
    """out[k] = how many values of `a` equal k, for k in 0 .. BINS-1."""
    return np.bincount(a, minlength=BINS).astype(np.int32)


def random_config(rng):
    """300 to 3000 values, 256 threads per block, as many blocks as needed: always several times
    more values than the BINS global atomics per block that privatisation needs."""
    size = int(rng.integers(300, 3001))
    blocks = -(-size // TPB)
    return {"threads": [TPB], "blocks": [blocks],
            "shapes": {"out": [BINS], "a": [size]}, "scalars": {"size": size},
            "dtypes": {"a": "int32", "out": "int32"}}


def make_inputs(rng, shapes, scalars):
    """Values in [0, BINS). Half the time they crowd into one to four bins (a skewed histogram,
    as real data often is), so that many lanes of a warp hit the same counter."""
    if rng.random() < 0.5:
        values = rng.integers(0, BINS, size=shapes["a"])
    else:
        hot = rng.choice(BINS, size=int(rng.integers(1, 5)), replace=False)
        values = rng.choice(hot, size=shapes["a"])
    return {"a": values.astype(np.int32)}
