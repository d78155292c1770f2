"""A native environment as a gymnasium environment of one, for Python's tools.

Training steps a `NativeEnv` inside the compiled call; evaluation, rendering and a policy's own
loop want a gymnasium `Env`. `NativeGymEnv` steps a batch of one eagerly: the same dynamics,
Box actions clipped as in training, truncation at `max_episode_steps` as gymnasium's `TimeLimit`
does (also on a step that terminates).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import tensorflow as tf

from agents.envs.native_env import NativeEnv


class NativeGymEnv(gym.Env):
    """`env` as a gymnasium environment of one.

    `reset(seed=s)` draws the initial state with the stateless seed `[s, 0]` (without a seed,
    from the env's `np_random`). `render()` returns the frame of the env's optional
    `render(state) -> np.ndarray` method ([H, W, 3] uint8, for one state) with `render_mode`
    "rgb_array", else None.

    Args:
        env: The native environment.
        render_mode: "rgb_array" or None.
    """

    def __init__(self, env: NativeEnv, render_mode: str | None = None) -> None:
        self.native = env
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self.render_mode = render_mode
        frames = callable(getattr(env, "render", None))
        self.metadata = {"render_modes": ["rgb_array"] if frames else []}
        self._state: Any = None
        self._steps = 0

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**31 - 1))
        self._state, observ = self.native.initial(1, tf.constant([seed, 0], tf.int32))
        self._steps = 0
        return np.asarray(observ)[0], {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._state is None:
            raise RuntimeError(f"Reset {self.native.name} before stepping it.")
        space = self.action_space
        if isinstance(space, gym.spaces.Box):
            action = np.clip(np.asarray(action, space.dtype), space.low, space.high)
        action = tf.convert_to_tensor(np.asarray(action, space.dtype)[None])
        self._state, reward, terminated = self.native.step(self._state, action)
        self._steps += 1
        terminated = bool(np.asarray(terminated)[0])
        limit = self.native.max_episode_steps
        # As gymnasium's TimeLimit: the limit's step is truncated, whether or not it terminates.
        truncated = limit is not None and self._steps >= limit
        observ = np.asarray(self.native.observe(self._state))[0]
        return observ, float(np.asarray(reward)[0]), terminated, truncated, {}

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array" or self._state is None:
            return None
        render = getattr(self.native, "render", None)
        return np.asarray(render(self._state)) if callable(render) else None
