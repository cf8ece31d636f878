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
    doc = np.stack([_documents(rng, S, row) for row in range(B)])
    arrays.append(np.ascontiguousarray(doc, dtype=np.int32))
    return tuple(arrays)


def output_shape(shape):
    B, H, S, D = (int(v) for v in shape)
    return (B, H, S, D)


def _documents(rng, S, row):
    """Sorted document ids for one batch row: documents from one position to the whole sequence,
    ids rising by 1 or 2 from 0 to 2 (so no kernel may take them for positions or counts).
    - row 0, 3, ...: one long document among tiny ones. Past 128 positions (the widest tile a
      kernel might use) wherever the row is longer than 129, else at least half the row; the rest
      of the row, at least one position, is cut into documents of 1 to 3 positions on either side;
    - row 1, 4, ...: a single document spanning the whole row;
    - row 2, 5, ...: tiny documents only, of 1 to 4 positions."""
    if row % 3 == 1 or S == 1:
        lengths = [S]
    elif row % 3 == 2:
        lengths = _tiny(rng, S, 4)
    else:
        long = int(rng.integers(129 if S > 129 else (S + 1) // 2, S))
        before = int(rng.integers(0, S - long + 1))
        lengths = _tiny(rng, before, 3) + [long] + _tiny(rng, S - long - before, 3)
    ids = int(rng.integers(0, 3)) + np.cumsum(rng.integers(1, 3, size=len(lengths))) - 1
    return np.repeat(ids, lengths)


def _tiny(rng, total, longest):
    """Lengths of 1 to `longest` positions that add up to `total`."""
    lengths = []
    while total > 0:
        lengths.append(min(total, int(rng.integers(1, longest + 1))))
        total -= lengths[-1]
    return lengths

