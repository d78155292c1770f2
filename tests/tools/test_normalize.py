"""Tests for the in-graph normalizers against numpy on the concatenated data."""

import numpy as np
import pytest
import tensorflow as tf

from agents.tools.normalize import RewardScaler, RunningMeanStd, StreamingNormalize
from tests import moments
from tests.floats import assert_float32_close

SHAPES = moments.SHAPES


def _naive_scaled_rewards(rewards, dones, gamma, clip, epsilon=1e-8):
    """Slow reference: the std of every discounted return seen so far, recomputed at each step."""
    ret, seen, scaled = np.zeros(rewards.shape[1]), [], []
    for reward, done in zip(rewards, dones, strict=True):
        ret = ret * gamma + reward
        seen.extend(ret)
        scaled.append(np.clip(reward / np.sqrt(np.var(seen) + epsilon), -clip, clip))
        ret = np.where(done, 0.0, ret)
    return np.array(scaled)


@pytest.mark.parametrize("shape", SHAPES)
def test_streaming_normalize_matches_numpy_on_concatenation(shape):
    rng = np.random.default_rng(1)
    normalizer = StreamingNormalize(shape)
    dtype = np.float32 if shape == (3,) else np.float64  # float32 inputs are updated in float64.
    batches = [batch.astype(dtype) for batch in moments.random_batches(rng, shape)]
    for batch in batches:
        normalizer.update(tf.constant(batch))
    data = moments.concat(batches, shape).astype(np.float64)
    np.testing.assert_allclose(normalizer.mean.numpy(), data.mean(0), rtol=1e-10)
    np.testing.assert_allclose(normalizer.var.numpy(), data.var(0), rtol=1e-10)
    assert normalizer.count.numpy() == len(data)
    normalized = normalizer.transform(data).numpy()
    assert normalized.dtype == np.float32
    np.testing.assert_allclose(normalized.mean(0), np.zeros(shape), atol=1e-5)
    np.testing.assert_allclose(normalized.std(0), np.ones(shape), atol=1e-5)


def test_streaming_normalize_rejects_wrong_sample_shape():
    with pytest.raises(ValueError):
        StreamingNormalize((3,)).update(tf.zeros([4, 2]))


def test_transform_is_identity_before_update_and_clips():
    normalizer = StreamingNormalize((2,))
    value = np.array([[0.5, -3.0], [7.0, -8.0]], np.float32)
    assert_float32_close(normalizer.transform(value), [[0.5, -3.0], [5.0, -5.0]])
    normalizer.update(np.array([[0.0, 0.0], [2.0, 2.0]]))  # mean 1, std 1
    assert_float32_close(normalizer.transform([[4.0, 100.0]]), [[3.0, 5.0]])
    unclipped = StreamingNormalize((2,), center=False, clip=None)
    unclipped.update(np.array([[0.0, 0.0], [2.0, 2.0]]))
    assert_float32_close(unclipped.transform([[4.0, 100.0]]), [[4.0, 100.0]])


def test_summary_reports_average_mean_and_std():
    normalizer = StreamingNormalize((2,))
    normalizer.update(np.array([[0.0, 10.0], [2.0, 14.0]]))
    summary = {key: float(value) for key, value in normalizer.summary().items()}
    assert summary == pytest.approx({"mean": 6.5, "std": 1.5, "count": 2.0})


@pytest.mark.parametrize("kind", [RunningMeanStd, StreamingNormalize])
def test_checkpoint_round_trip(tmp_path, kind):
    normalizer = kind((2, 3), name="observ")
    normalizer.update(np.random.default_rng(3).normal(4.0, 2.0, (9, 2, 3)))
    path = tf.train.Checkpoint(normalizer=normalizer).save(str(tmp_path / "ckpt"))
    restored = kind((2, 3), name="observ")
    tf.train.Checkpoint(normalizer=restored).restore(path).assert_consumed()
    for name in ("count", "mean", "var"):
        np.testing.assert_array_equal(getattr(restored, name), getattr(normalizer, name))
    assert not normalizer.trainable_variables


def test_inside_tf_function_without_retracing():
    normalizer = StreamingNormalize((3,))
    traces = []

    @tf.function
    def step(value):
        traces.append(1)
        normalizer.update(value)
        return normalizer.transform(value)

    rng = np.random.default_rng(4)
    batches = [rng.normal(2.0, 3.0, (6, 3)) for _ in range(4)]
    for batch in batches:
        step(tf.constant(batch))
    assert len(traces) == 1
    data = np.concatenate(batches)
    np.testing.assert_allclose(normalizer.mean.numpy(), data.mean(0), rtol=1e-10)
    np.testing.assert_allclose(normalizer.var.numpy(), data.var(0), rtol=1e-10)


def test_reward_scaler_matches_naive_reference():
    rng = np.random.default_rng(5)
    # Nearly equal first rewards give a tiny return variance, so the first step hits the clip.
    rewards = np.concatenate([[[1.0, 1.0, 1.001]], rng.normal(0.5, 2.0, (11, 3))])
    dones = rng.random((12, 3)) < 0.3
    scaler = RewardScaler(num_envs=3, gamma=0.9)
    scale = tf.function(scaler.scale)
    scaled = np.array([scale(r.astype(np.float32), d) for r, d in zip(rewards, dones, strict=True)])
    expected = _naive_scaled_rewards(rewards.astype(np.float32), dones, gamma=0.9, clip=10.0)
    assert_float32_close(scaled, expected)
    np.testing.assert_allclose(scaled[0], [10.0, 10.0, 10.0])
    assert np.abs(scaled[1:]).max() < 10.0


def test_reward_scaler_two_steps_by_hand():
    scaler = RewardScaler(num_envs=2, gamma=0.5)
    # Step 1: returns [1, 3], of variance 1, so the rewards pass unchanged; env 1 is done.
    first = scaler.scale([1.0, 3.0], [False, True])
    assert_float32_close(first, [1.0, 3.0])
    np.testing.assert_array_equal(scaler.returns, [1.0, 0.0])
    # Step 2: returns [0.5 * 1 + 2, 0.5 * 0 - 2] = [2.5, -2]. The returns seen, {1, 3, 2.5, -2},
    # have mean 9/8 and variance 81/16 - 81/64 = 243/64: rewards are divided by sqrt(243) / 8.
    second = scaler.scale([2.0, -2.0], [False, False])
    assert_float32_close(second, [16 / np.sqrt(243), -16 / np.sqrt(243)])
    np.testing.assert_array_equal(scaler.returns, [2.5, -2.0])
    assert second.dtype == tf.float32


def test_reward_scaler_checkpoint_keeps_returns_and_statistics(tmp_path):
    scaler = RewardScaler(num_envs=2, gamma=0.5)
    scaler.scale([1.0, 2.0], [False, True])
    scaler.scale([3.0, -1.0], [False, False])
    path = tf.train.Checkpoint(scaler=scaler).save(str(tmp_path / "ckpt"))
    restored = RewardScaler(num_envs=2, gamma=0.5)
    tf.train.Checkpoint(scaler=restored).restore(path).assert_consumed()
    np.testing.assert_array_equal(restored.returns, [3.5, -1.0])
    np.testing.assert_array_equal(restored.return_stats.var, scaler.return_stats.var)
    np.testing.assert_array_equal(
        restored.scale([1.0, 1.0], [False, False]), scaler.scale([1.0, 1.0], [False, False])
    )
