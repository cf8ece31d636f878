import numpy as np


def make_inputs(rng, shape):
    rows, cols = (int(v) for v in shape)
    x = 3.0 + 2.0 * rng.standard_normal((rows, cols))
    gamma = 1.0 + 0.5 * rng.standard_normal(cols)
    beta = 0.5 * rng.standard_normal(cols)
    return (
        np.ascontiguousarray(x, dtype=np.float32),
        gamma.astype(np.float32),
        beta.astype(np.float32),
    )


def output_shape(shape):
    rows, cols = (int(v) for v in shape)
    return (rows, cols)
