"""Aggregates over runs (seeds): IQM and bootstrap confidence intervals, as rliable defines them.

The interquartile mean (IQM) is the mean of the middle half of the scores, `trim_mean(scores,
0.25)` (scipy's definition, which rliable uses: int(0.25 * n) scores cut from each end). A 95%
confidence interval is the percentile bootstrap over runs: the statistic of `reps` resamples of
the runs with replacement, and the 2.5th and 97.5th percentiles of those (rliable's
`get_interval_estimates` with its default percentile method, for one task). The probability
that one group of runs improves on another is rliable's for one task: the Mann-Whitney U
statistic over every pair of runs, ties counting a half, its interval the stratified bootstrap
(each group's runs resampled on their own). Pure numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

Statistic = Callable[[np.ndarray], float]


def iqm(scores: Sequence[float] | np.ndarray) -> float:
    """The interquartile mean: the mean of the scores left after cutting a quarter at each end.

    Raises:
        ValueError: For no scores.
    """
    values = np.sort(np.asarray(scores, np.float64).reshape(-1))
    if not len(values):
        raise ValueError("The IQM of no scores is undefined.")
    cut = int(0.25 * len(values))
    return float(np.mean(values[cut : len(values) - cut]))


def mean(scores: Sequence[float] | np.ndarray) -> float:
    """The mean of the scores (a statistic with `iqm`'s signature)."""
    return float(np.mean(np.asarray(scores, np.float64)))


def bootstrap_ci(
    scores: Sequence[float] | np.ndarray,
    statistic: Statistic = iqm,
    reps: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """The percentile bootstrap confidence interval of `statistic` over runs.

    Args:
        scores: One score per run.
        statistic: Maps an array of scores to a number (`iqm`, `mean`).
        reps: Number of bootstrap resamples.
        confidence: Size of the interval (0.95: the 2.5th to the 97.5th percentile).
        seed: Seed of the resampling, so that a table is the same each time it is made.

    Returns:
        `(low, high)`; both equal the statistic for a single run.
    """
    values = np.asarray(scores, np.float64).reshape(-1)
    rng = np.random.default_rng(seed)
    resamples = values[rng.integers(0, len(values), size=(reps, len(values)))]
    return _percentiles(np.array([statistic(row) for row in resamples]), confidence)


def _percentiles(stats: np.ndarray, confidence: float) -> tuple[float, float]:
    """The central `confidence` interval of bootstrap statistics (percentile method)."""
    tail = 100.0 * (1.0 - confidence) / 2.0
    low, high = np.percentile(stats, [tail, 100.0 - tail])
    return float(low), float(high)


def probability_of_improvement(
    scores: Sequence[float] | np.ndarray, others: Sequence[float] | np.ndarray
) -> float:
    """P(X > Y): the chance that a run of `scores` beats a run of `others`, over every pair of
    runs, a tie counting a half (rliable's probability of improvement on one task).

    Raises:
        ValueError: For a group with no scores.
    """
    x = np.asarray(scores, np.float64).reshape(-1, 1)
    y = np.asarray(others, np.float64).reshape(1, -1)
    if not x.size or not y.size:
        raise ValueError("The probability of improvement needs runs in both groups.")
    return float(_wins(x, y))


def _wins(x: np.ndarray, y: np.ndarray, axis=None) -> np.ndarray:
    """The share of pairs in which `x` beats `y` (broadcast), a tie counting a half."""
    return np.mean((x > y) + 0.5 * (x == y), axis=axis)


def improvement_ci(
    scores: Sequence[float] | np.ndarray,
    others: Sequence[float] | np.ndarray,
    reps: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """The stratified percentile bootstrap interval of `probability_of_improvement`: each
    group's runs resampled with replacement on their own, `reps` times.

    Returns:
        `(low, high)`; both equal the probability for groups of one run each.
    """
    x = np.asarray(scores, np.float64).reshape(-1)
    y = np.asarray(others, np.float64).reshape(-1)
    rng = np.random.default_rng(seed)
    xs = x[rng.integers(0, len(x), size=(reps, len(x)))][:, :, None]
    ys = y[rng.integers(0, len(y), size=(reps, len(y)))][:, None, :]
    return _percentiles(_wins(xs, ys, axis=(1, 2)), confidence)


class Summary(NamedTuple):
    """The aggregate of one group of runs' scores."""

    runs: int
    mean: float
    mean_ci: tuple[float, float]
    iqm: float
    iqm_ci: tuple[float, float]
    std: float


def summarize(scores: Sequence[float] | np.ndarray, reps: int = 10_000) -> Summary:
    """Mean and IQM of the runs' scores, each with its 95% bootstrap interval, and the std."""
    values = np.asarray(scores, np.float64).reshape(-1)
    return Summary(
        len(values),
        mean(values),
        bootstrap_ci(values, mean, reps),
        iqm(values),
        bootstrap_ci(values, iqm, reps),
        float(np.std(values)),
    )


def band(curves: Sequence[tuple[np.ndarray, np.ndarray]], reps: int = 2_000) -> tuple:
    """The mean curve of several runs with its 95% bootstrap band, on a common x axis.

    Each run's curve is interpolated linearly onto the x values of the first run that lie within
    every run's range (runs of one config evaluate at the same env steps: no interpolation).

    Args:
        curves: `(x, y)` per run, x increasing.
        reps: Bootstrap resamples per point.

    Returns:
        `(x, mean, low, high)` arrays.

    Raises:
        ValueError: For no curves, or curves whose ranges do not overlap.
    """
    curves = [(np.asarray(x, np.float64), np.asarray(y, np.float64)) for x, y in curves if len(x)]
    if not curves:
        raise ValueError("No curve with points to aggregate.")
    start = max(x[0] for x, _ in curves)
    end = min(x[-1] for x, _ in curves)
    grid = curves[0][0][(curves[0][0] >= start) & (curves[0][0] <= end)]
    if not len(grid):
        raise ValueError("The runs' curves share no range of x to aggregate over.")
    values = np.stack([np.interp(grid, x, y) for x, y in curves])  # [runs, points]
    intervals = np.array([bootstrap_ci(column, mean, reps) for column in values.T])
    return grid, values.mean(axis=0), intervals[:, 0], intervals[:, 1]
