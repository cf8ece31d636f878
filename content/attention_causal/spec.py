import numpy as np

D = 8
SHARED = 450.0  # the size of the keys' common component


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
    """Normal q (spread 1.5), k and v, and every key shares a large common component (SHARED / sqrt(D)
    in each dimension). Every other query row, from row 0, leans along it so that all its raw scores
    shift by 750 to 1000, either way: the shift cancels in the softmax, but exp() of such a score
    overflows (or underflows to 0 / 0) even in double precision, so only a kernel that keeps the
    running max passes, on the simulator as on a GPU. q and k lie on a grid of 1/32, which makes
    every product and every sum of a score exact in float32."""
    size = shapes["q"][0]
    q = rng.normal(size=shapes["q"]) * 1.5
    k = rng.normal(size=shapes["k"]) + SHARED / np.sqrt(D)
    hot = np.arange(size) % 2 == 0
    n_hot = int(hot.sum())
    shift = rng.choice([-1.0, 1.0], size=(n_hot, 1)) * rng.uniform(750.0, 1000.0, size=(n_hot, 1))
    q[hot] = q[hot] - q[hot].mean(axis=1, keepdims=True) + shift / SHARED
    return {
        "q": (np.round(q * 32) / 32).astype(np.float32),
        "k": (np.round(k * 32) / 32).astype(np.float32),
        "v": rng.normal(size=shapes["v"]).astype(np.float32),
    }
