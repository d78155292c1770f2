"""Tests for E3B: the elliptical episodic bonus, its inverse dynamics, and the agent with it."""

import gymnasium as gym
import keras
import numpy as np
import pytest
import tensorflow as tf

from agents import tools
from agents.ppo.exploration.e3b import E3B, elliptical_bonus
from agents.ppo.exploration.rnd_agent import RNDPPO
from agents.scripts import configs


def _reference(embeddings, starts, ridge):
    """The bonus by explicit covariances: one per env, a new one at each episode's start."""
    steps, envs, size = embeddings.shape
    covariance = [ridge * np.eye(size) for _ in range(envs)]
    bonus = np.zeros([steps, envs])
    for t in range(steps):
        for n in range(envs):
            if starts[t, n]:
                covariance[n] = ridge * np.eye(size)
            phi = embeddings[t, n].astype(np.float64)
            bonus[t, n] = phi @ np.linalg.solve(covariance[n], phi)
            covariance[n] = covariance[n] + np.outer(phi, phi)
    return bonus, np.stack([np.linalg.inv(c) for c in covariance])


def test_the_bonus_by_hand_in_one_dimension():
    # ridge 1, phi = 1 each step: C = 1, 2, 3, so the bonus is 1, 1/2, 1/3; a new episode at t=3.
    embeddings = tf.ones([4, 1, 1])
    starts = tf.constant([[False], [False], [False], [True]])
    bonus, inverse = elliptical_bonus(embeddings, starts, tf.ones([1, 1, 1]), ridge=1.0)
    np.testing.assert_allclose(bonus.numpy()[:, 0], [1.0, 0.5, 1 / 3, 1.0], rtol=1e-6)
    np.testing.assert_allclose(inverse.numpy(), [[[0.5]]], rtol=1e-6)  # C = 1 + 1 after t=3.


@pytest.mark.parametrize("compiled", [False, True])
def test_the_bonus_equals_explicit_covariances_over_rollouts(compiled):
    rng = np.random.default_rng(0)
    steps, envs, size, ridge = 12, 3, 4, 0.1
    embeddings = rng.normal(size=[3 * steps, envs, size]).astype(np.float32)
    starts = rng.random([3 * steps, envs]) < 0.15
    expected, expected_inverse = _reference(embeddings, starts, ridge)
    call = tf.function(elliptical_bonus, jit_compile=True) if compiled else elliptical_bonus
    inverse = tf.eye(size, batch_shape=[envs]) / ridge
    got = []
    for start in range(0, 3 * steps, steps):  # Three rollouts, the inverses carried over.
        window = slice(start, start + steps)
        bonus, inverse = call(
            tf.constant(embeddings[window]), tf.constant(starts[window]), inverse, ridge
        )
        got.append(bonus.numpy())
    np.testing.assert_allclose(np.concatenate(got), expected, rtol=2e-3, atol=1e-5)
    np.testing.assert_allclose(inverse.numpy(), expected_inverse, rtol=2e-3, atol=1e-4)


def test_a_seen_embedding_pays_less_and_a_new_direction_pays_as_much_as_at_the_start():
    e3b = E3B((3,), num_actions=2, num_envs=1, embedding_size=3, ridge=0.1)
    basis = np.eye(3, dtype=np.float32)
    phi = tf.constant(basis[[0, 0, 0, 1]][:, None])  # [T=4, N=1, 3]
    bonus, _ = elliptical_bonus(phi, tf.zeros([4, 1], tf.bool), e3b.inverse, e3b.ridge)
    first, second, third, new = bonus.numpy()[:, 0]
    assert first == pytest.approx(10.0) and second < first / 5 and third < second
    assert new == pytest.approx(first)


def test_inverse_dynamics_learn_which_action_moved_the_observation():
    """Observations are points in the plane; action k moves one by a unit along axis k // 2,
    forwards or backwards: the head learns to tell the four apart from the two embeddings."""
    rng = np.random.default_rng(1)
    e3b = E3B((2,), num_actions=4, num_envs=1, embedding_size=8, torso_width=32, seed=3)
    moves = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], np.float32)
    optimizer = keras.optimizers.Adam(1e-2)

    def batch(size=256):
        observ = rng.normal(size=[size, 2]).astype(np.float32)
        action = rng.integers(0, 4, size)
        return observ, observ + moves[action], action

    @tf.function
    def step(observ, next_observ, action):
        with tf.GradientTape() as tape:
            loss = e3b.inverse_dynamics_loss(
                observ, next_observ, action, tf.ones_like(action, bool)
            )
        grads = tape.gradient(loss, e3b.trainable_variables)
        optimizer.apply_gradients(zip(grads, e3b.trainable_variables))
        return loss

    first = float(step(*batch()))
    for _ in range(300):
        step(*batch())
    observ, next_observ, action = batch(1000)
    pair = tf.concat([e3b.embed(observ), e3b.embed(next_observ)], -1)
    accuracy = np.mean(np.argmax(e3b.head(pair).numpy(), -1) == action)
    assert first > 1.2 and accuracy > 0.95  # From chance (log 4 = 1.39) to telling them apart.
    # Invalid transitions (after an episode's end) do not count.
    masked = e3b.inverse_dynamics_loss(observ, next_observ, (action + 1) % 4, np.zeros(1000, bool))
    assert float(masked) == 0.0


def _agent(action_space, **overrides):
    envs = [
        tools.MockEnvironment(
            (7, 7, 3), min_duration=3, max_duration=7, seed=i, action_space=action_space
        )
        for i in range(2)
    ]
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True))
    config = configs.debug()
    config.update(
        agent="rnd_ppo", bonus="e3b", rollout_length=8, chunk_length=4, update_epochs=2,
        num_minibatches=2, rnd_hidden=16, e3b_embedding_size=4, network="auto", **overrides,
    )  # fmt: skip
    return batch_env, RNDPPO(batch_env, tools.AttrDict(config), seed=0)


def _rollout(random, ends):
    return {
        "observ": tf.constant(random.integers(0, 6, [8, 2, 7, 7, 3]).astype(np.float32)),
        "terminated": tf.constant(ends),
        "truncated": tf.zeros([8, 2], tf.bool),
        "reward": tf.zeros([8, 2]),
        "value": tf.zeros([8, 2]),
        "value_int": tf.zeros([8, 2]),
    }


@pytest.mark.slow
def test_the_agent_with_e3b_trains_its_embedding_and_builds_no_rnd():
    batch_env, agent = _agent(gym.spaces.Discrete(3))
    assert set(agent.components) == {"e3b"} and agent.warm_up_steps == 0
    assert "predictor_loss" not in agent.METRICS
    embedding = [v.numpy().copy() for v in agent.components["e3b"].embedding.variables]
    run = tf.function(lambda: tools.simulate_steps(batch_env, agent, 8))
    run()
    run()
    assert int(agent.optimizer.iterations) == 2 * 2 * 2
    after = agent.components["e3b"].embedding.variables
    assert any(not np.allclose(a, b.numpy()) for a, b in zip(embedding, after, strict=True))
    assert np.isfinite(float(agent.metrics["inverse_dynamics_loss"]))
    assert float(agent.metrics["intrinsic_reward"]) > 0.0


def test_a_step_that_ends_an_episode_earns_no_e3b_bonus():
    """Its next observation is the next episode's first, whose bonus under a fresh inverse
    (|phi|^2 / ridge) would dwarf the others; the inverse still starts from it."""
    _, agent = _agent(gym.spaces.Discrete(3))
    random = np.random.default_rng(0)
    ends = np.zeros([8, 2], bool)
    ends[2, 0] = ends[5, 1] = True
    data = _rollout(random, ends)
    next_observ = tf.constant(random.integers(0, 6, [2, 7, 7, 3]).astype(np.float32))
    rewards, _ = agent._stream_rewards(data, next_observ)
    intrinsic = rewards["_int"].numpy()
    assert (intrinsic[ends] == 0).all() and (intrinsic[~ends] > 0).all()
    # The inverse took the new episode's first observation: it is no longer I / ridge.
    fresh = np.eye(4) / agent.components["e3b"].ridge
    assert not np.allclose(agent.components["e3b"].inverse.numpy()[0], fresh)


@pytest.mark.parametrize("scale", ["return", "reward", "auto"])
def test_intrinsic_rewards_are_scaled_by_the_std_of_their_returns_or_of_themselves(scale):
    """`return` (RND's): the bonuses over the std of their discounted return, unclipped;
    `reward` (E3B's reference, and E3B's `auto`): over the std of the bonuses themselves,
    clipped to 1."""
    _, agent = _agent(gym.spaces.Discrete(3), int_reward_scale=scale)
    random = np.random.default_rng(1)
    data = _rollout(random, np.zeros([8, 2], bool))
    next_observ = tf.constant(random.integers(0, 6, [2, 7, 7, 3]).astype(np.float32))
    inverse = agent.components["e3b"].inverse.numpy()
    rewards, _ = agent._stream_rewards(data, next_observ)
    frames = np.concatenate([data["observ"].numpy()[1:], next_observ.numpy()[None]])
    phi = agent.components["e3b"].embed(frames).numpy().astype(np.float64)
    bonus = np.zeros([8, 2])
    for n in range(2):  # The elliptical bonus, by explicit inverses.
        covariance = np.linalg.inv(inverse[n].astype(np.float64))
        for t in range(8):
            bonus[t, n] = phi[t, n] @ np.linalg.solve(covariance, phi[t, n])
            covariance += np.outer(phi[t, n], phi[t, n])
    gamma = agent._config.gamma_int if scale == "return" else 0.0
    returns = np.zeros_like(bonus)
    for t in range(8):
        returns[t] = bonus[t] + (gamma * returns[t - 1] if t else 0.0)
    expected = bonus / np.sqrt(returns.var() + 1e-8)
    if scale != "return":
        assert expected.max() > 1.0  # The first bonuses of an episode, |phi|^2 / ridge.
        expected = np.minimum(expected, 1.0)
    np.testing.assert_allclose(rewards["_int"].numpy(), expected, rtol=1e-3)


def test_e3b_on_continuous_actions_is_one_line_naming_the_other_bonuses():
    with pytest.raises(ValueError, match=r"^bonus=e3b needs a discrete action space .*count\.$"):
        _agent(gym.spaces.Box(-1.0, 1.0, (2,)))
