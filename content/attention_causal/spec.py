import numpy as np

D = 8


def spec(q, k, v, size):
    """softmax(q k^T / sqrt(D)) v with key j hidden from query i whenever j > i, in float64."""
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    scores = q64 @ k64.T / np.sqrt(D)
    scores[np.triu(np.ones((size, size), dtype=bool), 1)] = -np.inf
    p = np.exp(scores - scores.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return (p @ v64).astype(np.float32)


def random_config(rng):
    """A sequence of 1 to 12 tokens; one block of D threads per query row, blocks laid out as (size,)."""
    size = int(rng.integers(1, 13))
    return {
        "threads": [D],
        "blocks": [size],
        "shapes": {"out": [size, D], "q": [size, D], "k": [size, D], "v": [size, D]},
        "scalars": {"size": size},
    }


def make_inputs(rng, shapes, scalars):
    """Small normal values; q is a little larger so that some rows attend sharply."""
    return {
        "q": (rng.normal(size=shapes["q"]) * 1.5).astype(np.float32),
        "k": rng.normal(size=shapes["k"]).astype(np.float32),
        "v": rng.normal(size=shapes["v"]).astype(np.float32),
    }
