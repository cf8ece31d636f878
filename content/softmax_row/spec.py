import numpy as np

TPB = 16


def spec(a, cols):
    """Softmax of every row, computed stably in float64: exp(x - max) / sum(exp(x - max))."""
    x = a.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def random_config(rng):
    """1 to 5 rows of 1 to 16 columns; one block of TPB threads per row, blocks laid out as (rows,)."""
    rows = int(rng.integers(1, 6))
    cols = int(rng.integers(1, TPB + 1))
    return {
        "threads": [TPB],
        "blocks": [rows],
        "shapes": {"out": [rows, cols], "a": [rows, cols]},
        "scalars": {"cols": cols},
    }


def make_inputs(rng, shapes, scalars):
    """Real-valued scores spread around a large offset per row, between 750 and 1000 in size, of
    either sign. exp() of such numbers overflows (or underflows to 0 / 0) even in float64, so only a
    kernel that subtracts the row max first passes, on the simulator as on a GPU."""
    rows = shapes["a"][0]
    offset = rng.choice([-1.0, 1.0], size=(rows, 1)) * rng.uniform(750.0, 1000.0, size=(rows, 1))
    return {"a": (rng.normal(size=shapes["a"]) * 3.0 + offset).astype(np.float32)}
