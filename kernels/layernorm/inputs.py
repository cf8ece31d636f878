import numpy as np


def make_inputs(rng, shape):
    rows, cols = (int(v) for v in shape)
    # Even rows: mean about 3, spread about 2. Odd rows sit far from zero: a mean of 100 to 1000
    # in size, either sign, and a spread of a hundredth of it. There E[x^2] - mean^2 in float32
    # cancels away most of its digits (the variance is 1e-4 of E[x^2]); the mean of the squared
    # deviations keeps them.
    x = 3.0 + 2.0 * rng.standard_normal((rows, cols))
    far = np.arange(rows) % 2 == 1
    n_far = int(far.sum())
    mean = rng.choice([-1.0, 1.0], size=(n_far, 1)) * rng.uniform(100.0, 1000.0, size=(n_far, 1))
    x[far] = mean + np.abs(mean) / 100.0 * rng.standard_normal((n_far, cols))
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
