"""Tests for `NativeGymEnv`: a native env as a gymnasium env of one, truncated as TimeLimit."""

import gymnasium as gym
import numpy as np
import pytest

from agents.envs.gym_env import NativeGymEnv
from tests.scripts.native_envs import Corridor


class _PythonCorridor(gym.Env):
    """Corridor's dynamics in Python, for gymnasium's own TimeLimit."""

    observation_space = Corridor.observation_space
    action_space = Corridor.action_space

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.cell = 0.0
        return np.array([0.0], np.float32), {}

    def step(self, action):
        self.cell = min(max(self.cell + 2 * int(action) - 1, 0.0), 6.0)
        terminated = self.cell >= 6.0
        reward = 1.0 if terminated else -0.01
        return np.array([self.cell / 6.0], np.float32), reward, terminated, False, {}


class _Short(Corridor):
    max_episode_steps = 6  # The goal is reached on the limit's own step when walking right.


@pytest.mark.parametrize("actions", [[1] * 6, [0] * 6, [1, 1, 0, 1, 1]])
def test_the_last_step_is_truncated_as_gymnasiums_time_limit_says(actions):
    native = NativeGymEnv(_Short())
    python = gym.wrappers.TimeLimit(_PythonCorridor(), max_episode_steps=6)
    native.reset(seed=0)
    python.reset(seed=0)
    for action in actions:
        got, want = native.step(action), python.step(action)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
        assert got[1:4] == pytest.approx(want[1:4])
        assert (got[2], got[3]) == (want[2], want[3])


def test_the_goal_on_the_limits_step_both_terminates_and_truncates():
    env = NativeGymEnv(_Short())
    env.reset(seed=0)
    for _ in range(5):
        assert env.step(1)[2:4] == (False, False)
    assert env.step(1)[2:4] == (True, True)
