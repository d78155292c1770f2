"""NativeBatchEnv: the batch interface over a native env, its checks and its random draws."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents.envs import NativeBatchEnv, NativeEnv, make_native


class Drift(NativeEnv):
    """A 1-D state pushed by a Box action; `broken` returns what the protocol forbids."""

    state_shape = (1,)
    state_dtype = tf.float32
    max_episode_steps = 4

    def __init__(self, broken: str | None = None) -> None:
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.broken = broken

    def initial_state(self, count, seed):
        return tf.random.stateless_uniform([count, 1], seed)

    def step(self, state, action):
        state = state + action
        reward = state[:, 0]
        if self.broken == "reward_shape":
            reward = state
        if self.broken == "graph_dtype":
            reward = tf.where(state[:, 0] > 0, 1.0, tf.cast(reward, tf.float64))
        if self.broken == "nan":
            reward = tf.where(state[:, 0] > 2.5, np.nan, reward)
        return state, reward, state[:, 0] > 100.0

    def observe(self, state):
        if self.broken == "nan_observ":
            return tf.where(state > 2.5, np.nan, state)
        return tf.cast(state, tf.float64) if self.broken == "observ_dtype" else state


@pytest.mark.parametrize(
    "broken, message",
    [
        (
            "reward_shape",
            r"Native env Drift: step gave rewards float32\[3, 1\], expected float32\[3\]",
        ),
        ("graph_dtype", r"Native env Drift: does not trace as a graph: Input 'e' of 'SelectV2'"),
        (
            "observ_dtype",
            r"Native env Drift: observe gave float64\[3, 1\], expected float32\[3, 1\]",
        ),
    ],
)
def test_a_native_env_returning_wrong_shapes_or_dtypes_is_one_line(broken, message):
    with pytest.raises(ValueError, match=message):
        NativeBatchEnv(Drift(broken), 3)


def test_box_actions_are_clipped_and_non_finite_rewards_are_raised_after_the_call():
    batch = NativeBatchEnv(Drift("nan"), 2, seed=0)
    batch.reset()
    start = batch.state.numpy()
    batch.simulate(tf.constant([[5.0], [-5.0]]))
    np.testing.assert_allclose(batch.state.numpy(), start + [[1.0], [-1.0]])
    batch.raise_if_nonfinite()  # Nothing non-finite yet.
    batch.simulate(tf.constant([[1.0], [0.0]]))
    batch.simulate(tf.constant([[1.0], [0.0]]))  # Env 0 passes 2.5: a NaN reward.
    with pytest.raises(
        FloatingPointError, match="Native env Drift returned a non-finite .* step 2"
    ):
        batch.raise_if_nonfinite()


def test_reset_draws_advance_within_and_across_compiled_calls_and_reproduce_by_seed():
    def draws(seed):
        batch = NativeBatchEnv(make_native("CartPole-v1"), 4, seed=seed)

        @tf.function(jit_compile=True, autograph=False)
        def two_resets():
            return batch.reset(), batch.reset(tf.constant([1, 3]))

        return [x.numpy() for call in range(2) for x in two_resets()]

    first, again, other = draws(5), draws(5), draws(6)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)  # The same seed, bit for bit.
    rows = np.concatenate(first)
    assert len(np.unique(rows, axis=0)) == len(rows)  # No draw repeats, in or across calls.
    assert not np.allclose(first[0], other[0])


def test_reset_where_restarts_the_masked_envs_as_reset_of_their_indices_does():
    by_index, in_place = (NativeBatchEnv(make_native("CartPole-v1"), 4, seed=2) for _ in "ab")
    assert in_place.resets_in_place
    by_index.reset()
    in_place.reset_where(tf.ones([4], tf.bool))
    push = tf.constant([1, 0, 1, 1])
    for batch in (by_index, in_place):
        for _ in range(3):
            batch.simulate(push)
    draws = int(in_place.draws.numpy())
    in_place.reset_where(tf.zeros([4], tf.bool))  # Nobody restarts: nothing moves.
    assert int(in_place.draws.numpy()) == draws and in_place.length.numpy().tolist() == [3] * 4
    by_index.reset(tf.constant([0, 2]))
    in_place.reset_where(tf.constant([True, False, True, False]))
    for name in ("state", "observ", "reward", "score", "length", "done", "draws"):
        np.testing.assert_array_equal(
            getattr(in_place, name).numpy(), getattr(by_index, name).numpy(), err_msg=name
        )
    assert in_place.length.numpy().tolist() == [0, 3, 0, 3]


def test_a_few_restarts_take_a_small_draw_in_order_and_many_take_the_whole_batchs():
    """16 envs draw 2 states where at most 2 restart (the k-th restart takes the k-th), else 16
    as `reset` does; other envs keep their states either way."""
    batch = NativeBatchEnv(make_native("CartPole-v1"), 16, seed=3)
    batch.reset()
    for mask, drawn in [([5], 2), ([3, 9], 2), ([1, 8, 12], 16)]:
        before = batch.state.numpy()
        expected = batch._draw(drawn, batch.draws)[0].numpy()
        batch.reset_where(tf.constant(np.isin(np.arange(16), mask)))
        after = batch.state.numpy()
        rows = range(len(mask)) if drawn == 2 else mask
        np.testing.assert_array_equal(after[mask], expected[list(rows)])
        kept = np.setdiff1d(np.arange(16), mask)
        np.testing.assert_array_equal(after[kept], before[kept])


def test_episodes_truncate_at_the_limit_and_restart_on_reset():
    batch = NativeBatchEnv(Drift(), 2, seed=0)
    batch.reset()
    for _ in range(4):
        assert not batch.done.numpy().any()
        batch.simulate(tf.zeros([2, 1]))
    assert batch.truncated.numpy().all() and not batch.terminated.numpy().any()
    assert batch.length.numpy().tolist() == [4, 4]
    observ = batch.reset(tf.constant([0])).numpy()
    assert batch.length.numpy().tolist() == [0, 4]
    np.testing.assert_array_equal(batch.observ.numpy()[0], observ[0])


@pytest.mark.parametrize("broken", ["nan", "nan_observ"])
@pytest.mark.parametrize("bounded", [False, True])
def test_an_env_with_bounded_observations_skips_their_check_but_not_the_rewards(broken, bounded):
    env = Drift(broken)
    env.observations_bounded = bounded
    batch = NativeBatchEnv(env, 2, seed=0)
    batch.reset()
    for _ in range(3):  # Env 0 passes 2.5 at its third step.
        batch.simulate(tf.constant([[1.0], [0.0]]))
    if bounded and broken == "nan_observ":
        batch.raise_if_nonfinite()  # The env promised; the batch no longer looks.
        assert np.isnan(batch.observ.numpy()[0, 0])
    else:
        with pytest.raises(FloatingPointError, match="Native env Drift .* step 2"):
            batch.raise_if_nonfinite()
