import numpy as np


def make_inputs(rng, shape):
    m, k, n = (int(v) for v in shape)
    a = rng.uniform(-1.0, 1.0, (m, k)).astype(np.float32)
    b = rng.uniform(-1.0, 1.0, (k, n)).astype(np.float32)
    return (a, b)


def output_shape(shape):
    m, k, n = (int(v) for v in shape)
    return (m, n)
