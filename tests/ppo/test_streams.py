"""Tests for value streams: one GAE per stream, weighted into the policy's advantage."""

import numpy as np
import tensorflow as tf

from agents.ppo import streams
from tests.floats import assert_float32_close


def _naive_gae(reward, value, next_value, terminated, done, discount, lambda_):
    """Slow reference: the GAE recursion over a [T, B] rollout, for testing only."""
    steps, batch = reward.shape
    advantage = np.zeros((steps, batch))
    for b in range(batch):
        following = 0.0
        for t in reversed(range(steps)):
            delta = reward[t, b] + discount * (1 - terminated[t, b]) * next_value[t, b]
            delta -= value[t, b]
            following = delta + discount * lambda_ * (1 - done[t, b]) * following
            advantage[t, b] = following
    return advantage


def _rollout():
    # Two envs, three steps: env 0 terminates at step 0; env 1 is truncated at step 1.
    return {
        "value": tf.constant([[1.0, 2.0], [0.5, 1.5], [0.0, 1.0]]),
        "value_int": tf.constant([[0.2, 0.1], [0.3, 0.4], [0.1, 0.0]]),
        "final_value": tf.constant([[0.0, 0.0], [0.0, 9.0], [0.0, 0.0]]),
        "terminated": tf.constant([[True, False], [False, False], [False, False]]),
        "truncated": tf.constant([[False, False], [False, True], [False, False]]),
    }


def test_one_extrinsic_stream_is_plain_gae_with_truncation_bootstrapped():
    data = _rollout()
    reward = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0]])
    bootstrap = np.array([3.0, 4.0])
    advantage, returns = streams.stream_targets(
        data, {"": tf.constant(reward, tf.float32)}, {"": tf.constant(bootstrap, tf.float32)},
        (streams.extrinsic(0.9),), 0.8,
    )  # fmt: skip
    value = data["value"].numpy()
    # value_{t+1}, the truncated step's final value, and the bootstrap after the rollout.
    next_value = np.array([[0.5, 1.5], [0.0, 9.0], [3.0, 4.0]])
    terminated = data["terminated"].numpy().astype(float)
    done = terminated + data["truncated"].numpy()
    expected = _naive_gae(reward, value, next_value, terminated, done, 0.9, 0.8)
    assert_float32_close(advantage, expected)
    assert_float32_close(returns["return"], expected + value)
    # Hand-computed: env 0's terminal step, A = r - V = 1 - 1.
    assert float(advantage[0, 0]) == 0.0


def test_a_non_episodic_stream_ignores_episode_ends_and_streams_are_weighted():
    data = _rollout()
    reward = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0]])
    reward_int = np.array([[0.5, 0.1], [0.2, 0.3], [0.0, 0.4]])
    both = (
        streams.extrinsic(0.9, coef=2.0),
        streams.ValueStream("_int", 0.99, episodic=False, coef=0.5),
    )
    rewards = {"": tf.constant(reward, tf.float32), "_int": tf.constant(reward_int, tf.float32)}
    bootstrap = {"": tf.constant([3.0, 4.0]), "_int": tf.constant([0.6, 0.7])}
    advantage, returns = streams.stream_targets(data, rewards, bootstrap, both, 0.8)
    extrinsic, _ = streams.stream_targets(
        data, {"": rewards[""]}, {"": bootstrap[""]}, both[:1], 0.8
    )
    value_int = data["value_int"].numpy()
    next_int = np.concatenate([value_int[1:], [[0.6, 0.7]]])
    never = np.zeros_like(reward)
    intrinsic = _naive_gae(reward_int, value_int, next_int, never, never, 0.99, 0.8)
    assert_float32_close(returns["return_int"], intrinsic + value_int)
    assert_float32_close(advantage, extrinsic + 0.5 * intrinsic)
    # Weights given per update (a schedule's) replace the streams' own.
    weighted, _ = streams.stream_targets(
        data, rewards, bootstrap, both, 0.8, coefs={"": 2.0, "_int": tf.constant(0.25)}
    )
    assert_float32_close(weighted, extrinsic + 0.25 * intrinsic)
    # Hand-computed last step of env 0: R_int = A_int + V_int = (0 + 0.99 * 0.6 - 0.1) + 0.1.
    assert_float32_close(returns["return_int"][2, 0], 0.99 * 0.6)
