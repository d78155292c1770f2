"""Tests for RunningMeanStd against numpy on the concatenated data."""

import numpy as np
import pytest

from agents.tools.running_mean_std import RunningMeanStd, combine_moments


def _random_batches(rng, shape, num_batches=5):
    """Batches of random sizes (some with an extra leading dimension) and different scales."""
    batches = []
    for index in range(num_batches):
        leading = (3, int(rng.integers(1, 6))) if index % 2 else (int(rng.integers(1, 16)),)
        batches.append(rng.normal(100.0 * index, index + 1.0, (*leading, *shape)))
    return batches


def test_combine_moments_hand_computed():
    assert combine_moments(1.5, 0.25, 2, 3.0, 0.0, 1) == pytest.approx((2.0, 2.0 / 3.0, 3.0))


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_matches_numpy_on_concatenation(shape):
    rng = np.random.default_rng(0)
    rms = RunningMeanStd(shape, epsilon=0.0)
    batches = _random_batches(rng, shape)
    for batch in batches:
        rms.update(batch)
    data = np.concatenate([b.reshape((-1, *shape)) for b in batches])
    np.testing.assert_allclose(rms.mean, data.mean(0), rtol=1e-10)
    np.testing.assert_allclose(rms.var, data.var(0), rtol=1e-10)
    np.testing.assert_allclose(rms.std, data.std(0), rtol=1e-10)
    assert rms.count == len(data)
    assert rms.mean.dtype == rms.var.dtype == np.float64


def test_default_epsilon_is_a_prior_pseudo_count():
    rms = RunningMeanStd()
    np.testing.assert_allclose([rms.mean, rms.var, rms.std], [0.0, 1.0, 1.0])
    data = np.random.default_rng(1).normal(5.0, 2.0, 1000)
    rms.update(data)
    assert rms.count == pytest.approx(1000.0001)
    np.testing.assert_allclose([rms.mean, rms.var], [data.mean(), data.var()], rtol=1e-5)


def test_empty_batch_leaves_statistics_unchanged():
    rms = RunningMeanStd((2,), epsilon=0.0)
    rms.update(np.zeros((0, 2)))
    np.testing.assert_array_equal([rms.mean, rms.var], [[0.0, 0.0], [1.0, 1.0]])
    rms.update([[1.0, 2.0], [3.0, 6.0]])
    rms.update(np.zeros((0, 2)))
    np.testing.assert_array_equal([rms.mean, rms.var], [[2.0, 4.0], [1.0, 4.0]])


def test_rejects_wrong_sample_shape():
    with pytest.raises(ValueError):
        RunningMeanStd((3,)).update(np.zeros((4, 2)))


def test_state_dict_round_trip_without_pickle(tmp_path):
    rms = RunningMeanStd((2, 3))
    rms.update(np.random.default_rng(2).normal(size=(7, 2, 3)))
    np.savez(tmp_path / "rms.npz", **rms.state_dict())
    restored = RunningMeanStd((2, 3))
    with np.load(tmp_path / "rms.npz", allow_pickle=False) as state:
        restored.load_state_dict(dict(state))
    np.testing.assert_array_equal(restored.mean, rms.mean)
    np.testing.assert_array_equal(restored.var, rms.var)
    assert restored.count == rms.count
    with pytest.raises(ValueError):
        RunningMeanStd((3,)).load_state_dict(rms.state_dict())
