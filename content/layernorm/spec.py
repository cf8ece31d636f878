import numpy as np

TPB = 16
EPS = 1e-5


def spec(a, gamma, beta, cols):
    """Layer norm over each row (population variance), in float64, then back to float32."""
    x = a.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    y = (x - mean) / np.sqrt(var + EPS) * gamma.astype(np.float64) + beta.astype(np.float64)
    return y.astype(np.float32)


def random_config(rng):
    """1 to 5 rows of 1 to 16 columns; one block of TPB threads per row, blocks laid out as (rows,)."""
    rows = int(rng.integers(1, 6))
    cols = int(rng.integers(1, TPB + 1))
    return {
        "threads": [TPB],
        "blocks": [rows],
        "shapes": {"out": [rows, cols], "a": [rows, cols], "gamma": [cols], "beta": [cols]},
        "scalars": {"cols": cols},
    }


def make_inputs(rng, shapes, scalars):
    """Activations with a non-zero mean, a scale near 1 and a small shift."""
    return {
        "a": rng.normal(0.5, 1.0, size=shapes["a"]).astype(np.float32),
        "gamma": rng.normal(1.0, 0.25, size=shapes["gamma"]).astype(np.float32),
        "beta": rng.normal(0.0, 0.5, size=shapes["beta"]).astype(np.float32),
    }
