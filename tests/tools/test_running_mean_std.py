"""Tests for RunningMeanStd and combine_moments against numpy on the concatenated data."""

import numpy as np
import pytest
import tensorflow as tf

from agents.tools.normalize import RunningMeanStd, combine_moments
from tests import moments

SHAPES = moments.SHAPES


class _UnusedComm:
    """A two-rank communicator that must not be used."""

    def Get_size(self):  # noqa: N802 (mpi4py's name)
        return 2

    def Allreduce(self, send, recv):  # noqa: N802 (mpi4py's name)
        raise AssertionError("comm was used although cross_replica_sum was given")


def test_combine_moments_hand_computed():
    mean, var, count = combine_moments(1.5, 0.25, 2.0, 3.0, 0.0, 1.0)
    np.testing.assert_allclose([mean, var, count], [2.0, 2.0 / 3.0, 3.0])
    assert mean.dtype == var.dtype == count.dtype == tf.float64


@pytest.mark.parametrize("shape", SHAPES)
def test_combine_moments_matches_numpy_on_concatenation(shape):
    rng = np.random.default_rng(0)
    a, b = rng.normal(3.0, 2.0, (7, *shape)), rng.normal(-1.0, 0.5, (4, *shape))
    mean, var, count = combine_moments(a.mean(0), a.var(0), 7.0, b.mean(0), b.var(0), 4.0)
    both = np.concatenate([a, b])
    np.testing.assert_allclose(mean, both.mean(0), rtol=1e-12)
    np.testing.assert_allclose(var, both.var(0), rtol=1e-12)
    assert count == 11.0


def test_combine_moments_with_empty_samples_keeps_first():
    mean, var, count = combine_moments(0.0, 1.0, 0.0, 0.0, 0.0, 0.0)
    np.testing.assert_allclose([mean, var, count], [0.0, 1.0, 0.0])
    mean, var, count = combine_moments(2.0, 3.0, 5.0, 0.0, 0.0, 0.0)
    np.testing.assert_allclose([mean, var, count], [2.0, 3.0, 5.0])


@pytest.mark.parametrize("shape", SHAPES)
def test_matches_numpy_on_concatenation(shape):
    rng = np.random.default_rng(1)
    rms = RunningMeanStd(shape, epsilon=0.0)
    batches = moments.random_batches(rng, shape, scale=100.0)
    batches[1] = batches[1].astype(np.float32)  # Updated in float64 all the same.
    for batch in batches:
        rms.update(batch)
    data = moments.concat(batches, shape)
    np.testing.assert_allclose(rms.mean, data.mean(0), rtol=1e-10)
    np.testing.assert_allclose(rms.var, data.var(0), rtol=1e-10)
    np.testing.assert_allclose(rms.std, data.std(0), rtol=1e-10)
    assert rms.count.numpy() == len(data)
    assert rms.mean.dtype == rms.var.dtype == rms.count.dtype == tf.float64
    assert not rms.trainable_variables


def test_uint8_frames_per_pixel():
    frames = np.random.default_rng(2).integers(0, 256, (2, 5, 4, 4, 1), dtype=np.uint8)
    rms = RunningMeanStd((4, 4, 1), epsilon=0.0)
    rms.update(frames)
    data = moments.concat([frames], (4, 4, 1))
    np.testing.assert_allclose(rms.mean, data.mean(0), rtol=1e-12)
    np.testing.assert_allclose(rms.var, data.var(0), rtol=1e-12)


def test_default_epsilon_is_a_prior_pseudo_count():
    rms = RunningMeanStd()
    np.testing.assert_allclose([rms.mean, rms.var, rms.std], [0.0, 1.0, 1.0])
    data = np.random.default_rng(3).normal(5.0, 2.0, 1000)
    rms.update(data)
    assert rms.count.numpy() == pytest.approx(1000.0001)
    np.testing.assert_allclose([rms.mean, rms.var], [data.mean(), data.var()], rtol=1e-5)


def test_empty_batch_leaves_statistics_unchanged():
    rms = RunningMeanStd((2,), epsilon=0.0)
    rms.update(np.zeros((0, 2)))
    np.testing.assert_array_equal([rms.mean, rms.var], [[0.0, 0.0], [1.0, 1.0]])
    rms.update([[1.0, 2.0], [3.0, 6.0]])
    rms.update(np.zeros((0, 2)))
    np.testing.assert_array_equal([rms.mean, rms.var], [[2.0, 4.0], [1.0, 4.0]])
    assert rms.count.numpy() == 2.0


@pytest.mark.parametrize("value_shape", [(4, 2), (2,), ()])
def test_rejects_wrong_sample_shape(value_shape):
    with pytest.raises(ValueError):
        RunningMeanStd((3,)).update(np.zeros(value_shape))


def test_cross_replica_sum_wins_over_comm():
    # Summing over two identical ranks doubles the count and keeps mean and variance.
    rms = RunningMeanStd((2,), epsilon=0.0, cross_replica_sum=lambda x: 2.0 * x, comm=_UnusedComm())
    data = np.random.default_rng(4).normal(1.0, 3.0, (6, 2))
    rms.update(data)
    np.testing.assert_allclose(rms.mean, data.mean(0), rtol=1e-12)
    np.testing.assert_allclose(rms.var, data.var(0), rtol=1e-12)
    assert rms.count.numpy() == 12.0


def test_inside_tf_function_with_varying_batch_size():
    rms = RunningMeanStd((3,), epsilon=0.0)
    traces = []

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def update(value):
        traces.append(1)
        rms.update(value)
        return rms.std

    rng = np.random.default_rng(6)
    batches = [rng.normal(2.0, 3.0, (n, 3)).astype(np.float32) for n in (4, 1, 9, 0, 6)]
    for batch in batches:
        std = update(batch)
    assert len(traces) == 1
    data = moments.concat(batches, (3,))
    np.testing.assert_allclose(rms.mean, data.mean(0), rtol=1e-10)
    np.testing.assert_allclose(rms.var, data.var(0), rtol=1e-10)
    np.testing.assert_allclose(std, data.std(0), rtol=1e-10)
