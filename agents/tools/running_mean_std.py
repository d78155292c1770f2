"""Running mean and variance in numpy float64, merged across MPI ranks (RND-style normalization)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def combine_moments(
    mean_a: np.ndarray,
    var_a: np.ndarray,
    count_a: float,
    mean_b: np.ndarray,
    var_b: np.ndarray,
    count_b: float,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Merges the moments of two disjoint samples (the parallel algorithm of Chan et al., 1979).

    With `delta = mean_b - mean_a` and `count = count_a + count_b`:
    `mean = mean_a + delta * count_b / count` and
    `var = (var_a * count_a + var_b * count_b + delta**2 * count_a * count_b / count) / count`,
    the population mean and variance of both samples concatenated. Unlike differencing sums of
    squares, this stays accurate when the mean is large relative to the spread.

    Args:
      mean_a: Mean of the first sample.
      var_a: Population variance of the first sample.
      count_a: Size of the first sample (may be fractional, e.g. a prior pseudo-count).
      mean_b: Mean of the second sample.
      var_b: Population variance of the second sample.
      count_b: Size of the second sample.

    Returns:
      `(mean, var, count)` of the union in float64; the first sample unchanged when `count` is 0.
    """
    count = float(count_a) + float(count_b)
    if count == 0:
        return np.asarray(mean_a, np.float64), np.asarray(var_a, np.float64), count
    delta = np.asarray(mean_b, np.float64) - mean_a
    mean = mean_a + delta * (count_b / count)
    m2 = var_a * count_a + var_b * count_b + np.square(delta) * (count_a * count_b / count)
    return mean, m2 / count, count


class RunningMeanStd:
    """Mean and variance of every sample seen so far, as in OpenAI baselines and RND.

    Statistics are float64: after millions of samples a float32 running count and mean lose the
    digits a new batch contributes. Each `update` computes the batch moments and merges them with
    `combine_moments`. With an MPI communicator of size > 1, the batch moments are first reduced
    over all ranks (an allreduce of count and sum, then one of the squared deviations from the
    global batch mean), so every rank holds the statistics of all ranks' data concatenated. `update`
    is then a collective: every rank must call it the same number of times (an empty batch is
    allowed).

    The statistics start at mean 0, variance 1 with a pseudo-count of `epsilon`, so dividing by
    `std` is safe before the first update; pass `epsilon=0` for the exact statistics of the data.

    Attributes:
      mean: float64 array of `shape`.
      var: float64 array of `shape`, the population variance.
      count: Number of samples seen (plus `epsilon`).
    """

    def __init__(self, shape: Sequence[int] = (), epsilon: float = 1e-4, comm: Any | None = None):
        """Creates the statistics.

        Args:
          shape: Shape of one sample.
          epsilon: Initial pseudo-count of the prior mean 0, variance 1.
          comm: Optional `mpi4py.MPI.Comm`; batch moments are summed over its ranks when it has
            more than one.
        """
        self.shape = tuple(int(d) for d in shape)
        self.mean = np.zeros(self.shape, np.float64)
        self.var = np.ones(self.shape, np.float64)
        self.count = float(epsilon)
        self._comm = comm if comm is not None and comm.Get_size() > 1 else None

    @property
    def std(self) -> np.ndarray:
        """Standard deviation, `sqrt(var)`."""
        return np.sqrt(self.var)

    def update(self, x: np.ndarray) -> None:
        """Adds a batch of samples.

        Args:
          x: Array of shape `[..., *shape]`; the leading dimensions are flattened into the batch.

        Raises:
          ValueError: If the trailing dimensions of `x` do not match `shape`.
        """
        batch_mean, batch_var, batch_count = self._batch_moments(x)
        self.mean, self.var, self.count = combine_moments(
            self.mean, self.var, self.count, batch_mean, batch_var, batch_count
        )

    def _batch_moments(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        x = np.asarray(x, np.float64)
        ndim = len(self.shape)
        if x.ndim < ndim or x.shape[x.ndim - ndim :] != self.shape:
            raise ValueError(f"Expected samples of shape {self.shape}, got an array of {x.shape}.")
        x = x.reshape((-1, *self.shape))
        count_sum = self._sum_over_ranks(np.concatenate([[len(x)], x.sum(0).ravel()]))
        count = float(count_sum[0])
        mean = count_sum[1:].reshape(self.shape) / max(count, 1.0)
        m2 = self._sum_over_ranks(np.square(x - mean).sum(0))
        return mean, m2 / max(count, 1.0), count

    def _sum_over_ranks(self, array: np.ndarray) -> np.ndarray:
        if self._comm is None:
            return array
        send = np.asarray(array, np.float64, order="C")
        recv = np.empty_like(send)
        self._comm.Allreduce(send, recv)  # mpi4py sums by default.
        return recv

    def state_dict(self) -> dict[str, np.ndarray]:
        """Returns copies of the statistics as plain float64 arrays (`np.savez` without pickle)."""
        return {
            "mean": self.mean.copy(),
            "var": self.var.copy(),
            "count": np.asarray(self.count, np.float64),
        }

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restores statistics saved by `state_dict`.

        Args:
          state: Mapping with `mean`, `var` (arrays of `shape`) and `count` (a scalar).

        Raises:
          ValueError: If the saved shapes do not match this instance.
        """
        mean = np.array(state["mean"], np.float64)
        var = np.array(state["var"], np.float64)
        if mean.shape != self.shape or var.shape != self.shape:
            raise ValueError(f"Expected statistics of shape {self.shape}, got {mean.shape}.")
        self.mean, self.var, self.count = mean, var, float(state["count"])
