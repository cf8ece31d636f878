import numpy as np


def spec(a, size):
    """One sum per block of 32: out[b] = a[32*b] + ... + a[32*b + 31] (missing values count 0)."""
    blocks = (size + 31) // 32
    padded = np.zeros(blocks * 32, dtype=np.float32)
    padded[:size] = a
    return padded.reshape(blocks, 32).sum(axis=1).astype(np.float32)


def random_config(rng):
    """One warp (32 threads) per block, as many blocks as needed for 1 to 128 values."""
    size = int(rng.integers(1, 129))
    blocks = (size + 31) // 32
    return {"threads": [32], "blocks": [blocks],
            "shapes": {"out": [blocks], "a": [size]}, "scalars": {"size": size}}
