"""Tests for the simulation step, driven by MockAlgorithm on MockEnvironments."""

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents import tools


def _setup(durations, action_space=None):
    envs = [
        tools.MockEnvironment((2,), (1,), d, d, seed=i, action_space=action_space)
        for i, d in enumerate(durations)
    ]
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True))
    algo = tools.MockAlgorithm(batch_env)
    step = tf.function(lambda reset=False: tools.simulate(batch_env, algo, reset=reset))
    return envs, batch_env, algo, step


def test_done_pattern_with_automatic_resets():
    envs, _, _, step = _setup([1, 2, 3, 4])
    history = [step()[0].numpy().tolist() for _ in range(6)]
    assert history == [
        [True, False, False, False],
        [True, True, False, False],
        [True, False, True, False],
        [True, True, False, True],
        [True, False, False, False],
        [True, True, True, False],
    ]
    assert [env.steps for env in envs] == [[1] * 6, [2, 2, 2], [3, 3], [4, 2]]


def test_done_pattern_with_forced_reset():
    envs, _, _, step = _setup([1, 2, 3, 4])
    for _ in range(2):
        step()
    done = step(tf.constant(True))[0].numpy().tolist()
    assert done == [True, False, False, False]
    # Each running episode was cut short and restarted.
    assert [env.steps for env in envs] == [[1, 1, 1], [2, 1], [2, 1], [2, 1]]
    assert [len(env.durations) for env in envs] == [3, 2, 2, 2]


def test_protocol_calls_and_metrics():
    _, _, algo, step = _setup([1, 2, 3, 4])
    for _ in range(4):
        done, score, metrics = step()
    assert algo.begun.numpy().tolist() == [4, 2, 2, 1]
    assert algo.experienced.numpy().tolist() == [4, 4, 4, 4]
    assert algo.ended.numpy().tolist() == [4, 2, 1, 1]
    finished = done.numpy()
    assert int(metrics["episodes"]) == finished.sum() == 3
    np.testing.assert_allclose(float(metrics["mean_score"]), score.numpy()[finished].mean(), 1e-6)
    assert float(metrics["mean_length"]) == pytest.approx((1 + 2 + 4) / 3)


def test_simulate_steps_returns_done_score_and_episode_lengths():
    _, batch_env, algo, _ = _setup([1, 2, 3, 4])
    run = tf.function(lambda: tools.simulate_steps(batch_env, algo, 4), autograph=False)
    done, score, length = run()
    assert done.numpy().tolist() == [
        [True, False, False, False],
        [True, True, False, False],
        [True, False, True, False],
        [True, True, False, True],
    ]
    # Like score: the finished episode's length where done, the running one elsewhere.
    assert length.numpy().tolist() == [[1, 1, 1, 1], [1, 2, 2, 2], [1, 1, 3, 3], [1, 2, 1, 4]]
    assert length.dtype == tf.int32 and score.shape == length.shape
    steps = tf.function(lambda: tools.simulate_steps(batch_env, algo, 2))()
    assert isinstance(steps, tools.Steps) and steps.done.shape == [2, 4]


def test_score_is_sum_of_rewards_of_episode():
    envs = [tools.MockEnvironment((2,), (1,), 3, 3, seed=0)]
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True))
    rewards = []

    class Recorder(tools.MockAlgorithm):
        def experience(self, agent_indices, observ, action, reward, *args):
            tf.numpy_function(lambda r: rewards.append(float(r[0])) or r, [reward], tf.float32)

    algo = Recorder(batch_env)
    step = tf.function(lambda: tools.simulate(batch_env, algo))
    for _ in range(3):
        done, score, _ = step()
    assert done.numpy().tolist() == [True]
    assert score.numpy()[0] == pytest.approx(sum(rewards), 1e-5)


def test_experience_gets_terminated_truncated_apart_and_final_observation():
    env = gym.wrappers.TimeLimit(tools.MockEnvironment((2,), (1,), 10, 10), max_episode_steps=2)
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv([env], blocking=True))
    seen = []

    class Recorder(tools.MockAlgorithm):
        def experience(self, agent_indices, observ, action, reward, terminated, truncated, nxt):
            record = lambda *xs: seen.append([np.array(x) for x in xs]) or np.int32(0)  # noqa: E731
            tf.numpy_function(record, [observ, terminated, truncated, nxt], tf.int32)

    algo = Recorder(batch_env)
    step = tf.function(lambda: tools.simulate(batch_env, algo))
    observs = []
    for _ in range(3):
        step()
        observs.append(batch_env.observ.numpy().copy())
    assert [(bool(s[1][0]), bool(s[2][0])) for s in seen] == [
        (False, False),
        (False, True),
        (False, False),
    ]
    # The truncated step's next observation is the true final one, not the next episode's first.
    np.testing.assert_array_equal(seen[1][3], observs[1])
    assert not np.array_equal(seen[2][0], observs[1])


@pytest.mark.parametrize("space", [gym.spaces.Discrete(3), gym.spaces.MultiDiscrete([2, 5])])
def test_discrete_actions_flow_as_integers(space):
    _, batch_env, _, step = _setup([3, 3], action_space=space)
    for _ in range(4):
        step()
    assert batch_env.action.dtype == tf.int32
    assert all(space.contains(a.astype(np.int64)) for a in batch_env.action.numpy())
