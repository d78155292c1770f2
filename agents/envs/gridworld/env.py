"""MiniGridEnv: a minigrid id as a `NativeEnv` (symbolic view, minigrid's rules and layouts)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import tensorflow as tf

from agents.envs.gridworld import dynamics, layouts, pixels, view
from agents.envs.gridworld.encoding import NUM_ACTIONS, VIEW_SIZE
from agents.envs.gridworld.state import GridState
from agents.envs.native_env import NativeEnv
from agents.envs.registry import MINIGRID_IDS

IDS = MINIGRID_IDS  # MultiRoom-N4-S5: v0 has six rooms, v1 four.
DEFAULT_BANK = 4096
WRAPPERS = (None, "minigrid_image", "minigrid_pixels")  # What native MiniGrid observes.


class MiniGridEnv(NativeEnv):
    """A minigrid env as TensorFlow ops: minigrid's `image` observation (7x7 cells of object,
    color and state, as float32), its seven actions, its rewards and time limit.

    Resets draw uniformly from a bank of `layout_bank` layouts made by minigrid's generator
    (`layouts.bank`). A `max_episode_steps` below the env's own `max_steps` truncates earlier
    (as gymnasium's `TimeLimit` does around minigrid); the goal's reward still scales with the
    env's own `max_steps`, as minigrid's does.

    With `wrapper="minigrid_pixels"` the observation is instead that wrapper's 56x56 grayscale
    frame of the same view (`pixels.frames`, equal to the wrapper's frame for frame), so the
    pixel agent trains native envs unchanged.

    Args:
        env_id: One of `IDS`.
        layout_bank: Number of layouts in the bank.
        layout_seed: Seed of the first layout (the bank is `reset(seed=layout_seed + k)`).
        wrapper: None or "minigrid_image" (the symbolic view), or "minigrid_pixels".

    Raises:
        ValueError: For another `wrapper`.
    """

    def __init__(
        self,
        env_id: str,
        layout_bank: int = DEFAULT_BANK,
        layout_seed: int = 0,
        wrapper: str | None = None,
    ) -> None:
        if wrapper not in WRAPPERS:
            raise ValueError(
                f"Native {env_id} observes through env_wrapper minigrid_image or "
                f"minigrid_pixels, not {wrapper!r}."
            )
        original = layouts.make_minigrid(env_id)
        self.env_id = env_id
        self.max_steps = int(original.max_steps)
        self.see_through_walls = bool(original.see_through_walls)
        self._max_episode_steps = self.max_steps
        self.pixels = wrapper == "minigrid_pixels"
        # Views of byte cells as float32 need no check of each step's values. Frames keep it:
        # without that reduction, XLA fused their rendering into each of their consumers in the
        # pixel agent's call, which then ran about a tenth slower.
        self.observations_bounded = not self.pixels
        size = VIEW_SIZE * pixels.TILE
        shape = (size, size, 1) if self.pixels else (VIEW_SIZE, VIEW_SIZE, 3)
        self.observation_space = gym.spaces.Box(0, 255, shape, np.float32)
        self.action_space = gym.spaces.Discrete(NUM_ACTIONS)
        bank = layouts.bank(env_id, layout_bank, layout_seed)
        self.layout_count = layout_bank
        # Cells fit in a byte; the bank is a constant of the compiled program.
        self._bank = GridState(
            **{
                key: tf.constant(value.astype(np.uint8 if key == "grid" else np.int32))
                for key, value in bank.items()
            }
        )
        # The first view of each layout, looked up at resets instead of rendered.
        self._bank_view = tf.cast(
            view.observe(self._layout(tf.range(layout_bank)), self.see_through_walls), tf.uint8
        )
        self.state_shape = GridState(*(tuple(v.shape[1:]) for v in self._bank))
        self.state_dtype = GridState(tf.uint8, *[tf.int32] * (len(GridState._fields) - 1))

    @property
    def max_episode_steps(self) -> int:
        """The time limit: the env's own `max_steps`, or a smaller limit set on the env."""
        return self._max_episode_steps

    @max_episode_steps.setter
    def max_episode_steps(self, value: int | None) -> None:
        self._max_episode_steps = self.max_steps if value is None else min(value, self.max_steps)

    @property
    def name(self) -> str:
        return self.env_id

    def _layout(self, index: tf.Tensor) -> GridState:
        layout = GridState(*(tf.gather(field, index) for field in self._bank))
        return layout

    def _draw_index(self, count, seed) -> tf.Tensor:
        return tf.random.stateless_uniform([count], seed, 0, self.layout_count, tf.int32)

    def initial_state(self, count, seed):
        return self._layout(self._draw_index(count, seed))

    def initial(self, count, seed):
        index = self._draw_index(count, seed)
        return self._layout(index), self._observation(tf.gather(self._bank_view, index))

    def step(self, state, action):
        return dynamics.step(GridState(*state), action, self.max_steps)

    def observe(self, state):
        return self._observation(view.observe(GridState(*state), self.see_through_walls))

    def _observation(self, image: tf.Tensor) -> tf.Tensor:
        """The observation of view encodings: the image itself, or its frame."""
        return tf.cast(pixels.frames(image) if self.pixels else image, tf.float32)
