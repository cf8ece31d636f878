import numpy as np


def spec(a, size):
    """Exclusive prefix sum: out[0] = 0 and out[i] = a[0] + ... + a[i-1]."""
    out = np.zeros(size, dtype=np.float32)
    out[1:] = np.cumsum(a)[:-1]
    return out


def random_config(rng):
    """Always one block of 8 threads, two elements each; the array holds 1 to 16 elements."""
    size = int(rng.integers(1, 17))
    return {"threads": [8], "blocks": [1],
            "shapes": {"out": [size], "a": [size]}, "scalars": {"size": size}}
