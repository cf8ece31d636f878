import numpy as np


def reference(q, k, v):
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    B, H, S, D = q.shape
    score = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(D)
    slope = 2.0 ** (-8.0 * (np.arange(H) + 1) / H)
    rel = np.arange(S)[None, :] - np.arange(S)[:, None]  # kv - q
    score = score + slope[None, :, None, None] * rel[None, None, :, :]
    allowed = np.tril(np.ones((S, S), dtype=bool))[None, None, :, :]  # kv <= q
    score = np.where(allowed, score, -np.inf)
    score = score - score.max(axis=3, keepdims=True)
    p = np.exp(score)
    p = p / p.sum(axis=3, keepdims=True)
    return np.einsum("bhqk,bhkd->bhqd", p, v)
