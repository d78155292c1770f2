"""Tests for random network distillation: networks, intrinsic rewards, their scaling, advantages."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from agents.ppo.exploration.rnd import RND
from agents.tools.normalize import RewardScaler
from tests.floats import assert_float32_close

SHAPE = (36, 36, 4)  # The smallest frames the conv stack accepts.


def _frames(seed, n):
    return np.random.default_rng(seed).integers(0, 256, (n, *SHAPE), dtype=np.uint8)


def _naive_scaled_intrinsic(rollouts, gamma, epsilon=1e-8):
    """Slow reference: non-episodic returns; the std of every return seen, after each rollout."""
    ret, seen, scaled = np.zeros(rollouts[0].shape[1]), [], []
    for rollout in rollouts:
        for reward in rollout:
            ret = ret * gamma + reward
            seen.extend(ret)
        scaled.append(rollout / np.sqrt(np.var(seen) + epsilon))
    return scaled


@pytest.fixture(scope="module")
def trained():
    """An RND whose predictor was trained with Adam for 50 steps on one fixed batch."""
    rnd = RND(SHAPE, feature_size=16, proportion_of_exp_used_for_predictor_update=0.5)
    frames = _frames(0, 32)
    rnd.initialize_observation_stats(np.concatenate([frames, _frames(1, 64)]))
    target_before = [v.numpy() for v in rnd.target.variables]
    reward_before = rnd.intrinsic_reward(frames).numpy()
    losses = _train_predictor(rnd, frames, 50)
    return rnd, frames, target_before, reward_before, losses


def _train_predictor(rnd, frames, steps):
    """The predictor's losses over `steps` Adam steps on one fixed batch of frames."""
    optimizer = keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(frames):
        with tf.GradientTape() as tape:
            loss = rnd.predictor_loss(frames)
        grads = tape.gradient(loss, rnd.trainable_variables)
        optimizer.apply_gradients(zip(grads, rnd.trainable_variables, strict=True))
        return loss

    return [float(train_step(frames)) for _ in range(steps)]


def test_variables_exist_after_init_in_a_fixed_order():
    rnd, same = RND(SHAPE, feature_size=8, seed=3), RND(SHAPE, feature_size=8, seed=3)
    # 4 target + 6 predictor layers (kernel and bias), 3 statistics, the generator state.
    assert len(rnd.variables) == 2 * 4 + 2 * 6 + 3 + 1
    for a, b in zip(rnd.variables, same.variables, strict=True):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    assert len(rnd.trainable_variables) == 2 * 6
    assert rnd.observation_stats.shape == (36, 36, 1)
    other = RND(SHAPE, feature_size=8, seed=4)
    assert not np.array_equal(rnd.target.variables[0], other.target.variables[0])


def test_predictor_learns_while_target_stays_frozen(trained):
    rnd, frames, target_before, reward_before, losses = trained
    assert losses[-1] < 0.1 * losses[0], losses
    for before, after in zip(target_before, rnd.target.variables, strict=True):
        np.testing.assert_array_equal(before, after)
    trainable = {id(v) for v in rnd.predictor.trainable_variables}
    trainable |= {id(v) for v in rnd.trainable_variables}
    assert not trainable & {id(v) for v in rnd.target.variables}
    assert rnd.intrinsic_reward(frames).numpy().mean() < 0.1 * reward_before.mean()


def test_novel_frames_get_higher_intrinsic_reward(trained):
    rnd, frames, *_ = trained
    seen = rnd.intrinsic_reward(frames).numpy()
    novel = tf.function(rnd.intrinsic_reward)(_frames(2, 32)).numpy()
    assert seen.shape == novel.shape == (32,)
    assert novel.mean() > 5.0 * seen.mean(), (novel.mean(), seen.mean())


def test_only_the_last_frame_is_used(trained):
    rnd, frames, *_ = trained
    changed = frames.copy()
    changed[..., :-1] = 255 - changed[..., :-1]
    np.testing.assert_array_equal(rnd.intrinsic_reward(changed), rnd.intrinsic_reward(frames))
    changed[..., -1] = 255 - changed[..., -1]
    assert not np.allclose(rnd.intrinsic_reward(changed), rnd.intrinsic_reward(frames))


def test_intrinsic_reward_keeps_leading_dimensions(trained):
    rnd, frames, *_ = trained
    rewards = rnd.intrinsic_reward(frames.reshape(4, 8, *SHAPE)).numpy()
    assert_float32_close(rewards.reshape(-1), rnd.intrinsic_reward(frames))


def test_observation_stats_are_per_pixel_of_the_last_frame():
    rnd = RND(SHAPE, feature_size=8)
    frames = _frames(3, 20)
    rnd.initialize_observation_stats(frames.reshape(4, 5, *SHAPE))
    last = frames[..., -1:].astype(np.float64)
    # Merged with the prior (mean 0, variance 1, pseudo-count 1e-4) of RunningMeanStd.
    n, prior = len(last), 1e-4
    mean = last.mean(0) * n / (n + prior)
    var = (prior + n * last.var(0) + last.mean(0) ** 2 * prior * n / (n + prior)) / (n + prior)
    np.testing.assert_allclose(rnd.observation_stats.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(rnd.observation_stats.var, var, rtol=1e-12)


def test_predictor_sample_draws_distinct_indices_at_the_proportion():
    rnd = RND(SHAPE, feature_size=8, proportion_of_exp_used_for_predictor_update=0.25)
    first, second = (np.sort(rnd.predictor_sample(64).numpy()) for _ in range(2))
    assert len(first) == 16 and len(set(first)) == 16 and first.min() >= 0 and first.max() < 64
    assert not np.array_equal(first, second)  # A new subset each call.
    counts = np.bincount(np.concatenate([rnd.predictor_sample(64) for _ in range(400)]), None, 64)
    assert counts.min() > 50 and counts.max() < 150  # Uniform: 100 expected per index.
    assert len(RND(SHAPE, proportion_of_exp_used_for_predictor_update=0.01).predictor_sample(10))


def test_predictor_loss_is_the_mean_error_of_the_drawn_frames():
    rnd = RND(SHAPE, feature_size=8, proportion_of_exp_used_for_predictor_update=0.25)
    frames = _frames(4, 64)  # [4, 16, ...]: any leading shape is flattened.
    state = rnd.rng.state.numpy()
    chosen = rnd.predictor_sample(64).numpy()
    rnd.rng.reset(state)
    loss = rnd.predictor_loss(frames.reshape(4, 16, *SHAPE)).numpy()
    errors = rnd.intrinsic_reward(frames).numpy()
    np.testing.assert_allclose(loss, errors[chosen].mean(), rtol=1e-5, atol=1e-7)
    assert not np.isclose(loss, errors[np.setdiff1d(np.arange(64), chosen)].mean())


def test_checkpointables_round_trip(tmp_path, trained):
    rnd, frames, *_ = trained
    path = tf.train.Checkpoint(**rnd.checkpointables()).save(str(tmp_path / "ckpt"))
    restored = RND(SHAPE, feature_size=16, seed=7)
    tf.train.Checkpoint(**restored.checkpointables()).restore(path).assert_consumed()
    for a, b in zip(rnd.variables, restored.variables, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(restored.intrinsic_reward(frames), rnd.intrinsic_reward(frames))


def test_rejects_small_frames_and_bad_proportion():
    with pytest.raises(ValueError):
        RND((35, 36, 4))
    with pytest.raises(ValueError):
        RND(SHAPE, proportion_of_exp_used_for_predictor_update=0.0)
    with pytest.raises(ValueError, match="H, W >= 56 for conv_stack 'tiles8'"):
        RND(SHAPE, conv_stack="tiles8")
    with pytest.raises(ValueError, match="Unknown conv_stack 'vgg'"):
        RND(SHAPE, conv_stack="vgg")


def test_the_tile_stack_learns_and_rewards_novel_frames():
    """Target and predictor on 56x56 frames through the 8x8-tile stack: the predictor fits
    frames it trained on, novel frames keep a larger error."""
    rnd = RND((56, 56, 1), feature_size=16, conv_stack="tiles8", seed=1)
    assert rnd.target.layers[0].kernel.shape == (8, 8, 1, 16)
    frames = np.random.default_rng(0).integers(0, 256, (32, 56, 56, 1), dtype=np.uint8)
    rnd.initialize_observation_stats(frames)
    losses = _train_predictor(rnd, frames, 50)
    assert losses[-1] < 0.1 * losses[0], losses
    novel = np.random.default_rng(1).integers(0, 256, (32, 56, 56, 1), dtype=np.uint8)
    assert (
        rnd.intrinsic_reward(novel).numpy().mean()
        > 3.0 * rnd.intrinsic_reward(frames).numpy().mean()
    )


def test_non_episodic_rollout_scaling_matches_naive_reference():
    rng = np.random.default_rng(5)
    rollouts = [rng.exponential(1.0 + i, (5, 3)) for i in range(4)]
    scaler = RewardScaler(num_envs=3, gamma=0.9, clip=None)  # RND's intrinsic reward.
    scale = tf.function(scaler.scale_rollout)
    scaled = [scale(rollout.astype(np.float32)).numpy() for rollout in rollouts]
    expected = _naive_scaled_intrinsic([r.astype(np.float32) for r in rollouts], gamma=0.9)
    for actual, reference in zip(scaled, expected, strict=True):
        assert actual.dtype == np.float32
        assert_float32_close(actual, reference)
    assert scaler.return_stats.count.numpy() == 4 * 5 * 3
