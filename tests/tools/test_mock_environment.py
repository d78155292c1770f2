"""Tests for MockEnvironment."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from agents.tools.mock_environment import MockEnvironment


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(observ_shape=(3,), action_shape=(2,)),
        dict(observ_shape=(2, 3), action_space=gym.spaces.Discrete(4)),
        dict(observ_shape=(8, 8, 3), observ_dtype=np.uint8, action_space=gym.spaces.Discrete(2)),
    ],
)
def test_passes_gymnasium_env_checker(kwargs):
    check_env(MockEnvironment(min_duration=5, max_duration=9, **kwargs), skip_render_check=True)


def test_durations_and_steps_are_recorded():
    env = MockEnvironment((2,), (1,), min_duration=2, max_duration=4, seed=3)
    env.reset()
    for _ in range(env.durations[0]):
        _, _, terminated, truncated, _ = env.step(np.zeros(1, np.float32))
    assert terminated and not truncated
    env.reset()
    env.step(np.zeros(1, np.float32))
    env.reset()
    assert len(env.durations) == 3
    assert all(2 <= d <= 4 for d in env.durations)
    assert env.steps == [env.durations[0], 1, 0]


def test_terminates_exactly_at_duration():
    env = MockEnvironment((1,), (1,), min_duration=3, max_duration=3)
    env.reset()
    flags = [env.step(np.zeros(1, np.float32))[2] for _ in range(3)]
    assert flags == [False, False, True]


def test_step_after_end_raises_clear_error():
    env = MockEnvironment((1,), (1,), 1, 1)
    env.reset()
    env.step(np.zeros(1, np.float32))
    with pytest.raises(RuntimeError, match="finished episode"):
        env.step(np.zeros(1, np.float32))


def test_rejects_bad_durations():
    with pytest.raises(ValueError, match="min_duration"):
        MockEnvironment((1,), (1,), 5, 2)
