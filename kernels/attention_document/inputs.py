import numpy as np

SHARED = 55.0  # the size of the keys' common component


def make_inputs(rng, shape):
    B, H, S, D = (int(v) for v in shape)
    # Normal q (spread 2), k and v (spread 1): scores of a few units. Every key also shares a
    # common component, SHARED / sqrt(D) in each dimension, and one query row in four (from row 1)
    # leans along it so that all its raw scores shift by 95 to 130, either way: the shift cancels
    # in the softmax, but exp() of such a score overflows float32 (or underflows to 0 / 0).
    q = rng.standard_normal((B, H, S, D)) * 2.0
    k = rng.standard_normal((B, H, S, D)) + SHARED / np.sqrt(D)
    v = rng.standard_normal((B, H, S, D))
    hot = np.arange(S) % 4 == 1
    size = (B, H, int(hot.sum()), 1)
    shift = rng.choice([-1.0, 1.0], size=size) * rng.uniform(95.0, 130.0, size=size)
    lean = q[:, :, hot]
    q[:, :, hot] = lean - lean.mean(axis=-1, keepdims=True) + shift / SHARED
    arrays = [np.ascontiguousarray(a, dtype=np.float32) for a in (q, k, v)]
    # Document ids: sorted random ids per batch (contiguous documents of random lengths).
    n_docs = max(1, S // 3)
    doc = np.sort(rng.integers(0, n_docs, size=(B, S)), axis=1)
    arrays.append(np.ascontiguousarray(doc, dtype=np.int32))
    return tuple(arrays)


def output_shape(shape):
    B, H, S, D = (int(v) for v in shape)
    return (B, H, S, D)
