import numpy as np

EPS = 1e-5


def reference(x, gamma, beta):
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    y = (x - mean) / np.sqrt(var + EPS)
    return y * np.asarray(gamma, dtype=np.float64) + np.asarray(beta, dtype=np.float64)
