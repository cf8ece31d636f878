import numpy as np


def make_inputs(rng, shape):
    rows, cols = (int(v) for v in shape)
    x = rng.standard_normal((rows, cols)) * 4.0
    # A few large entries per row (up to +-80) so exp without the max shift overflows.
    k = max(1, cols // 16)
    for r in range(rows):
        idx = rng.integers(0, cols, size=k)
        x[r, idx] = rng.uniform(-80.0, 80.0, size=k)
    x[:, 0] = np.where(np.arange(rows) % 2 == 0, 80.0, x[:, 0])  # even rows hit exp(80) = inf
    return (np.ascontiguousarray(x, dtype=np.float32),)


def output_shape(shape):
    rows, cols = (int(v) for v in shape)
    return (rows, cols)
