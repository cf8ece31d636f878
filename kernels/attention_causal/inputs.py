import numpy as np


def make_inputs(rng, shape):
    B, H, S, D = (int(v) for v in shape)
    # Standard normal k and v; q scaled by 2 so the softmax is peaked (scores of a few units).
    q = rng.standard_normal((B, H, S, D)) * 2.0
    k = rng.standard_normal((B, H, S, D))
    v = rng.standard_normal((B, H, S, D))
    arrays = [np.ascontiguousarray(a, dtype=np.float32) for a in (q, k, v)]
    return tuple(arrays)


def output_shape(shape):
    B, H, S, D = (int(v) for v in shape)
    return (B, H, S, D)
