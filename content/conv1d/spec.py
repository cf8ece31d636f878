import numpy as np


def spec(a, b, a_size, b_size):
    """out[i] = sum over j < b_size with i + j < a_size of a[i + j] * b[j]."""
    out = np.zeros(a_size, dtype=np.float32)
    for i in range(a_size):
        for j in range(b_size):
            if i + j < a_size:
                out[i] += a[i + j] * b[j]
    return out


def random_config(rng):
    """a of any length from 1 to 40, b of 1 to MAX_CONV (4), 8 threads per block."""
    a_size = int(rng.integers(1, 41))
    b_size = int(rng.integers(1, 5))
    return {
        "name": f"a of {a_size}, b of {b_size}",
        "threads": [8],
        "blocks": [(a_size + 7) // 8],
        "shapes": {"out": [a_size], "a": [a_size], "b": [b_size]},
        "scalars": {"a_size": a_size, "b_size": b_size},
    }
