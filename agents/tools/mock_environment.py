"""MockEnvironment: a gymnasium environment with random data and controlled episode lengths."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class MockEnvironment(gym.Env):
    """Environment returning random observations and rewards for a chosen episode length.

    Each episode's duration is drawn uniformly from [min_duration, max_duration] and appended to
    `durations`; the number of steps actually taken is appended to `steps` (an episode cut short
    by a reset shows a smaller number).
    The step that reaches the duration returns `terminated=True`.

    Args:
        observ_shape: Shape of the observations.
        action_shape: Shape of a continuous action (ignored when `action_space` is given).
        min_duration: Shortest episode length, in steps (>= 1).
        max_duration: Longest episode length, in steps.
        seed: Seed of the random number generator (also set by `reset(seed=...)`).
        action_space: Optional action space, e.g. `gym.spaces.Discrete(3)`.
        observ_dtype: `np.float32` for vectors, `np.uint8` for pixels.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        observ_shape: tuple[int, ...],
        action_shape: tuple[int, ...] = (),
        min_duration: int = 1,
        max_duration: int = 10,
        seed: int = 0,
        action_space: gym.Space | None = None,
        observ_dtype: Any = np.float32,
    ) -> None:
        if not 1 <= min_duration <= max_duration:
            raise ValueError(
                f"Need 1 <= min_duration <= max_duration, got {min_duration} and {max_duration}."
            )
        self._min_duration = min_duration
        self._max_duration = max_duration
        self._rng = np.random.default_rng(seed)
        if np.dtype(observ_dtype) == np.uint8:
            self.observation_space = gym.spaces.Box(0, 255, observ_shape, np.uint8)
        else:
            self.observation_space = gym.spaces.Box(-1.0, 1.0, observ_shape, np.float32)
        if action_space is None:
            action_space = gym.spaces.Box(-1.0, 1.0, action_shape, np.float32)
        self.action_space = action_space
        self.durations: list[int] = []
        self.steps: list[int] = []
        self._finished = True

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.durations.append(int(self._rng.integers(self._min_duration, self._max_duration + 1)))
        self.steps.append(0)
        self._finished = False
        return self._observ(), {}

    def step(self, action):
        if self._finished:
            raise RuntimeError(
                "MockEnvironment: step() called on a finished episode; call reset()."
            )
        if not self.action_space.contains(np.asarray(action, dtype=self.action_space.dtype)):
            raise ValueError(f"MockEnvironment: action {action!r} is not in {self.action_space}.")
        self.steps[-1] += 1
        terminated = self.steps[-1] >= self.durations[-1]
        self._finished = terminated
        reward = float(self._rng.uniform(-1, 1))
        return self._observ(), reward, terminated, False, {}

    def _observ(self) -> np.ndarray:
        space = self.observation_space
        if space.dtype == np.uint8:
            return self._rng.integers(0, 256, space.shape, dtype=np.uint8)
        return self._rng.uniform(-1, 1, space.shape).astype(np.float32)
