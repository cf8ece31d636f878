import numpy as np


def reference(x):
    return np.array([np.asarray(x, dtype=np.float64).sum()], dtype=np.float64)
