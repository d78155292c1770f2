"""IQM and bootstrap confidence intervals: by hand, against a slow reference and rliable."""

import numpy as np
import pytest

from agents.multirun import aggregates


def test_iqm_by_hand():
    assert aggregates.iqm([1.0, 2.0, 3.0]) == 2.0  # int(0.75) = 0 cut: the mean.
    assert aggregates.iqm([10.0, 1.0, 2.0, 3.0]) == 2.5  # One cut at each end: mean of 2, 3.
    assert aggregates.iqm([0, 0, 1, 1, 100, 100, 100, -50]) == pytest.approx(25.5)
    with pytest.raises(ValueError, match="no scores"):
        aggregates.iqm([])


def _slow_iqm(values):
    values = sorted(values)
    cut = int(0.25 * len(values))
    kept = values[cut : len(values) - cut]
    return sum(kept) / len(kept)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
def test_iqm_matches_a_slow_reference(n):
    values = np.random.default_rng(n).normal(size=n) * 100
    assert aggregates.iqm(values) == pytest.approx(_slow_iqm(list(values)))


def test_bootstrap_interval_matches_a_loop_over_the_same_resamples():
    scores = np.array([3.0, -1.0, 7.0, 2.0, 2.5, 9.0])
    low, high = aggregates.bootstrap_ci(scores, aggregates.mean, reps=500, seed=4)
    rng = np.random.default_rng(4)
    indices = rng.integers(0, len(scores), size=(500, len(scores)))
    stats = sorted(sum(scores[i] for i in row) / len(row) for row in indices)
    assert low == pytest.approx(np.percentile(stats, 2.5))
    assert high == pytest.approx(np.percentile(stats, 97.5))
    assert low < scores.mean() < high
    assert aggregates.bootstrap_ci([4.0], aggregates.iqm) == (4.0, 4.0)


def test_interval_estimates_equal_rliables():
    # rliable 1.2.0's get_interval_estimates({"a": scores[:, None]}, aggregate_iqm / mean,
    # reps=20000) on these five runs (percentile method): its intervals' ends are resampled
    # values, so they are reproduced exactly, whatever the resampling's random draws.
    scores = [-180.0, -150.0, -900.0, -170.0, -160.0]
    assert aggregates.iqm(scores) == -170.0 and aggregates.mean(scores) == -312.0
    assert aggregates.bootstrap_ci(scores, aggregates.iqm, 20_000) == pytest.approx(
        (-660.0, -153.33333333)
    )
    assert aggregates.bootstrap_ci(scores, aggregates.mean, 20_000) == pytest.approx(
        (-608.0, -158.0)
    )


def test_band_averages_runs_on_a_common_grid():
    curves = [
        (np.array([0, 10, 20, 30]), np.array([0.0, 1.0, 2.0, 3.0])),
        (np.array([0, 10, 20]), np.array([2.0, 3.0, 4.0])),
    ]
    grid, mean, low, high = aggregates.band(curves, reps=200)
    np.testing.assert_array_equal(grid, [0, 10, 20])  # Where both runs have points.
    np.testing.assert_allclose(mean, [1.0, 2.0, 3.0])
    assert (low <= mean).all() and (mean <= high).all()
    np.testing.assert_allclose(high - low, [2.0, 2.0, 2.0])  # Resamples of two runs: 0..2 apart.
    shifted = [(np.array([0.0, 10.0]), np.array([0.0, 10.0])), (np.array([5.0, 15.0]), np.ones(2))]
    grid, mean, *_ = aggregates.band(shifted, reps=10)
    np.testing.assert_allclose(grid, [10.0])
    np.testing.assert_allclose(mean, [5.5])  # 10 and the second run's 1, interpolated.


def _slow_improvement(xs, ys):
    wins = 0.0
    for x in xs:
        for y in ys:
            wins += 1.0 if x > y else 0.5 if x == y else 0.0
    return wins / (len(xs) * len(ys))


def test_probability_of_improvement_by_hand_and_against_a_slow_reference():
    # Pairs (1,1) a tie, (1,0), (2,1), (2,0) wins: 3.5 of 4.
    assert aggregates.probability_of_improvement([1.0, 2.0], [1.0, 0.0]) == 0.875
    assert aggregates.probability_of_improvement([1.0, 0.0], [1.0, 2.0]) == 0.125
    assert aggregates.probability_of_improvement([5.0], [5.0]) == 0.5
    rng = np.random.default_rng(3)
    for n, m in ((1, 4), (5, 5), (7, 3)):
        xs, ys = rng.integers(0, 4, size=n), rng.integers(0, 4, size=m)  # Ties on purpose.
        expected = _slow_improvement(list(xs), list(ys))
        assert aggregates.probability_of_improvement(xs, ys) == pytest.approx(expected)
    with pytest.raises(ValueError, match="runs in both groups"):
        aggregates.probability_of_improvement([], [1.0])


def test_improvement_interval_resamples_each_group_on_its_own():
    xs, ys = np.array([0.9, 0.2, 0.95, 0.5, 0.7]), np.array([0.1, 0.92, 0.3, 0.0])
    low, high = aggregates.improvement_ci(xs, ys, reps=300, seed=2)
    rng = np.random.default_rng(2)
    rows_x = rng.integers(0, len(xs), size=(300, len(xs)))
    rows_y = rng.integers(0, len(ys), size=(300, len(ys)))
    stats = [_slow_improvement(xs[i], ys[j]) for i, j in zip(rows_x, rows_y, strict=True)]
    assert low == pytest.approx(np.percentile(stats, 2.5))
    assert high == pytest.approx(np.percentile(stats, 97.5))
    assert low < aggregates.probability_of_improvement(xs, ys) < high
    # Groups apart: every resample of X beats every one of Y.
    assert aggregates.improvement_ci([10.0, 11.0, 12.0], [0.0, 1.0, 2.0]) == (1.0, 1.0)
    assert aggregates.improvement_ci([3.0], [3.0]) == (0.5, 0.5)
