"""Shared test data for the moment statistics (RunningMeanStd and the normalizers)."""

import numpy as np

SHAPES = [(), (3,), (2, 3)]


def random_batches(rng, shape, num_batches=5, scale=10.0):
    """Batches of random sizes (some with an extra leading dimension) and different scales."""
    batches = []
    for index in range(num_batches):
        leading = (2, int(rng.integers(1, 8))) if index % 2 else (int(rng.integers(1, 16)),)
        batches.append(rng.normal(scale * index, index + 1.0, (*leading, *shape)))
    return batches


def concat(batches, shape):
    """All values of `batches` as one [N, *shape] float64 array."""
    return np.concatenate([np.reshape(b, (-1, *shape)) for b in batches]).astype(np.float64)
