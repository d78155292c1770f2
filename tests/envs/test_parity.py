"""The native environments against gymnasium's: the same transition from the same state.

Each test sets gymnasium's `unwrapped` state to a native state, applies the same action, and
compares observation, reward and termination over 12,000 transitions: states spread over the
whole state space, states on each side of every termination threshold, at the velocity and
position clips and at the walls. Time limits and reset draws are compared too.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents.envs import NativeBatchEnv, make_native
from agents.envs.registry import CLASSIC_CONTROL_IDS

COUNT = 12_000


def _uniform(rng, low, high, count=COUNT):
    return rng.uniform(low, high, size=(count, len(low)))


def _near(rng, values, column, width, base):
    """Copies of `base` rows with `column` set within `width` of each of `values`."""
    rows = []
    for value in values:
        near = base.copy()
        near[:, column] = value + rng.uniform(-width, width, len(base))
        rows.append(near)
    return np.concatenate(rows)


def _cartpole_states(rng):
    spread = _uniform(rng, [-2.5, -3, -0.25, -3], [2.5, 3, 0.25, 3])
    base = spread[:1000]
    edges = [
        _near(rng, [-2.4, 2.4], 0, 0.05, base),
        _near(rng, [-12 * 2 * math.pi / 360, 12 * 2 * math.pi / 360], 2, 0.01, base),
        np.array([[2.4, 0, 0, 0], [-2.4, 0, 0, 0], [0, 0, 0.20943951, 0], [0, 0, -0.2094395, 0]]),
    ]
    return np.concatenate([spread, *edges])


def _pendulum_states(rng):
    spread = _uniform(rng, [-3 * math.pi, -8], [3 * math.pi, 8])
    clips = _near(rng, [-8.0, 8.0], 1, 0.5, spread[:1000])
    turns = _near(rng, [-math.pi, math.pi], 0, 1e-3, spread[:1000])
    return np.concatenate([spread, clips, turns])


def _acrobot_states(rng):
    max1, max2 = 4 * math.pi, 9 * math.pi
    spread = _uniform(rng, [-math.pi, -math.pi, -max1, -max2], [math.pi, math.pi, max1, max2])
    clips = np.concatenate(
        [
            _near(rng, [-max1, max1], 2, 1.0, spread[:500]),
            _near(rng, [-max2, max2], 3, 2.0, spread[:500]),
        ]
    )
    # Around the terminal line: the tip at height 1 (-cos(t1) - cos(t1 + t2) = 1), e.g. t2 = 0.
    tip = spread[:2000].copy()
    tip[:, 0] = rng.choice([-1, 1], 2000) * (math.acos(-0.5) + rng.uniform(-0.05, 0.05, 2000))
    tip[:, 1] = rng.uniform(-0.05, 0.05, 2000)
    tip[:, 2:] = rng.uniform(-0.5, 0.5, (2000, 2))
    return np.concatenate([spread, clips, tip])


def _car_states(rng, goal):
    spread = _uniform(rng, [-1.2, -0.07], [0.6, 0.07])
    walls = _near(rng, [-1.2, 0.6], 0, 0.02, spread[:1000])
    walls[:, 0] = np.clip(walls[:, 0], -1.2, 0.6)
    goals = _near(rng, [goal], 0, 0.02, spread[:1000])
    still = goals.copy()
    still[:, 1] = rng.uniform(-1e-3, 1e-3, len(still))  # Goal velocity 0, both sides.
    speeds = _near(rng, [-0.07, 0.07], 1, 0.005, spread[:1000])
    speeds[:, 1] = np.clip(speeds[:, 1], -0.07, 0.07)
    return np.concatenate([spread, walls, goals, still, speeds])


def _states(env_id, rng):
    if env_id.startswith("CartPole"):
        return _cartpole_states(rng)
    if env_id == "Pendulum-v1":
        return _pendulum_states(rng)
    if env_id == "Acrobot-v1":
        return _acrobot_states(rng).astype(np.float32).astype(np.float64)
    if env_id == "MountainCar-v0":
        return _car_states(rng, 0.5)
    # gymnasium keeps this variant's state in float32.
    return _car_states(rng, 0.45).astype(np.float32).astype(np.float64)


def _actions(space, count, rng):
    if isinstance(space, gym.spaces.Discrete):
        return rng.integers(0, space.n, count).astype(np.int32)
    return rng.uniform(space.low, space.high, (count, *space.shape)).astype(np.float32)


def _set_state(env, env_id, state):
    if env_id == "MountainCarContinuous-v0":
        env.state = state.astype(np.float32)
    elif env_id == "Acrobot-v1":
        env.state = state.astype(np.float32)  # As gymnasium's reset leaves it.
    else:
        env.state = state.copy()
    if env_id.startswith("CartPole"):
        env.steps_beyond_terminated = None  # A fresh transition, not a step after the end.


@pytest.mark.parametrize("env_id", CLASSIC_CONTROL_IDS)
def test_transitions_equal_gymnasiums(env_id):
    rng = np.random.default_rng(0)
    states = _states(env_id, rng)
    native = make_native(env_id)
    gym_env = gym.make(env_id).unwrapped
    gym_env.reset(seed=0)
    actions = _actions(native.action_space, len(states), rng)

    @tf.function(jit_compile=True, autograph=False)  # As training runs it: compiled by XLA.
    def step(states, actions):
        next_states, rewards, terminated = native.step(states, actions)
        return native.observe(next_states), rewards, terminated

    observs, rewards, terminated = step(tf.constant(states), tf.constant(actions))
    observs = observs.numpy()
    rewards, terminated = rewards.numpy(), terminated.numpy()
    expected = {"observ": [], "reward": [], "terminated": []}
    for state, action in zip(states, actions):
        _set_state(gym_env, env_id, state)
        observ, reward, term, trunc, _ = gym_env.step(action)
        assert not trunc
        expected["observ"].append(observ)
        expected["reward"].append(reward)
        expected["terminated"].append(term)
    assert len(states) >= 10_000
    np.testing.assert_allclose(observs, np.array(expected["observ"]), rtol=2e-6, atol=2e-7)
    np.testing.assert_allclose(rewards, np.array(expected["reward"]), rtol=2e-6, atol=1e-6)
    mismatched = np.flatnonzero(terminated != np.array(expected["terminated"]))
    assert mismatched.size == 0, f"terminations differ at states {states[mismatched[:5]]}"
    # Both outcomes occur where the env can terminate, so the thresholds were exercised.
    if env_id != "Pendulum-v1":
        assert 0.05 < terminated.mean() < 0.95


@pytest.mark.parametrize("env_id", CLASSIC_CONTROL_IDS)
def test_spaces_and_time_limit_equal_gymnasiums(env_id):
    native, gym_env = make_native(env_id), gym.make(env_id)
    assert native.observation_space == gym_env.observation_space
    assert native.action_space == gym_env.action_space
    assert native.max_episode_steps == gym.spec(env_id).max_episode_steps


def test_truncation_at_the_time_limit_as_gymnasiums_time_limit():
    """Pendulum never terminates: both truncate exactly at the limit, and then again after it."""
    limit = 7
    batch = NativeBatchEnv(make_native("Pendulum-v1", max_episode_steps=limit), 3, seed=1)
    gym_env = gym.make("Pendulum-v1", max_episode_steps=limit)
    batch.reset()
    gym_env.reset(seed=0)
    for step in range(1, limit + 1):
        batch.simulate(tf.zeros([3, 1]))
        *_, gym_truncated, _ = gym_env.step(np.zeros(1, np.float32))
        assert batch.truncated.numpy().tolist() == [gym_truncated] * 3, step
        assert batch.done.numpy().all() == (step == limit)
    assert batch.length.numpy().tolist() == [limit] * 3
    batch.reset(tf.constant([1]))
    assert batch.length.numpy().tolist() == [limit, 0, limit]
    assert batch.done.numpy().tolist() == [True, False, True]


RESET_RANGES = {
    "CartPole-v1": ([-0.05] * 4, [0.05] * 4),
    "Pendulum-v1": ([-math.pi, -1.0], [math.pi, 1.0]),
    "Acrobot-v1": ([-0.1] * 4, [0.1] * 4),
    "MountainCar-v0": ([-0.6, 0.0], [-0.4, 0.0]),
    "MountainCarContinuous-v0": ([-0.6, 0.0], [-0.4, 0.0]),
}


@pytest.mark.parametrize("env_id", sorted(RESET_RANGES))
def test_reset_draws_fill_gymnasiums_ranges(env_id):
    native = make_native(env_id)
    draws = native.initial_state(10_000, tf.constant([3, 0], tf.int64)).numpy()
    low, high = map(np.array, RESET_RANGES[env_id])
    assert (draws >= low).all() and (draws <= high).all()
    span = high - low
    # Uniform: the extremes come within 1% of the range's ends, the mean near its middle.
    np.testing.assert_allclose(draws.min(0), low, atol=0.01 * span.max())
    np.testing.assert_allclose(draws.max(0), high, atol=0.01 * span.max())
    np.testing.assert_allclose(draws.mean(0), (low + high) / 2, atol=0.02 * span.max())
    gym_env = gym.make(env_id).unwrapped
    gym_draws = np.array([gym_env.reset(seed=seed)[0] for seed in range(200)])
    assert gym_env.observation_space.contains(gym_draws[0])
    native_observs = native.observe(tf.constant(draws)).numpy()
    # Observations of both fall in the same box (of the draws' own observation ranges).
    assert (native_observs.min(0) <= gym_draws.min(0) + 1e-3 * span.max()).all()
    assert (native_observs.max(0) >= gym_draws.max(0) - 1e-3 * span.max()).all()
