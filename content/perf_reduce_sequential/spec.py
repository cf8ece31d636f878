import numpy as np

TPB = 256


def spec(a, size):
    """One sum per block of TPB values: out[b] = a[TPB*b] + ... + a[TPB*b + TPB - 1], values past
    the end counting 0."""
    blocks = -(-size // TPB)
    padded = np.zeros(blocks * TPB, dtype=np.float32)
    padded[:size] = a
    return padded.reshape(blocks, TPB).sum(axis=1).astype(np.float32)


def random_config(rng):
    """257 to 3000 values, 256 threads per block, as many blocks as needed (the last one partly
    empty); every block runs the full tree, so the counters' pattern is each block's."""
    size = int(rng.integers(257, 3001))
    blocks = -(-size // TPB)
    return {"threads": [TPB], "blocks": [blocks],
            "shapes": {"out": [blocks], "a": [size]}, "scalars": {"size": size}}
