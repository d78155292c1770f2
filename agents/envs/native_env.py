"""NativeEnv: an environment written as TensorFlow operations over a batch of states."""

from __future__ import annotations

import abc

import gymnasium as gym
import tensorflow as tf


class NativeEnv(abc.ABC):
    """The protocol of an environment whose dynamics are TensorFlow ops.

    A native environment holds no state of its own: it maps a batch of states [B, *state_shape] (one
    tensor, or a `tf.nest` structure of them, e.g. a NamedTuple of grid, position and counters, each
    with the batch as its first axis) and actions to the next states, rewards and terminations, so
    that stepping it is part of the compiled training call (`NativeBatchEnv` keeps the states in
    variables, counts episode lengths, truncates at `max_episode_steps` and resets finished
    episodes). Methods must be traceable TensorFlow (no Python side effects, no `numpy()`); random
    initial states come from stateless ops with the given seed, so runs reproduce.

    Attributes:
        observation_space: A float32 `gym.spaces.Box`.
        action_space: A `Discrete`, `MultiDiscrete` or `Box` space. Box actions reach `step`
            clipped to the space's bounds, as `tools.BatchEnv` clips them for Python envs.
        max_episode_steps: The time limit (None: no limit; the config's `max_episode_steps`
            overrides it).
        state_shape: Shape of one environment's state (a structure of shapes for a nested state).
        state_dtype: Its dtype (float64 computes as gymnasium's NumPy code does; a structure of
            dtypes for a nested state).
        observations_bounded: True only where `observe` cannot give a non-finite value or one
            outside `observation_space` (observations cast from bytes, say): `NativeBatchEnv`
            then skips its check of every step's observations, a reduction over all of them
            that can cost a cheap env as much as its step. Rewards are checked still.

    An env may also define `render(state) -> np.ndarray`, the [H, W, 3] uint8 frame of a batch
    of one state (eager, not traced), which `visualize` and `NativeGymEnv` use, and
    `agent_key(state) -> tf.Tensor`, the agent's own part of each state as small integers
    [B, K] (a grid world's cell, direction and carried object), which the episodic bonuses
    count visits of with `visit_key: agent`.
    """

    observation_space: gym.spaces.Box
    action_space: gym.Space
    max_episode_steps: int | None = None
    state_shape: tuple[int, ...] = ()
    state_dtype: tf.DType = tf.float64
    observations_bounded: bool = False

    @abc.abstractmethod
    def initial_state(self, count: int, seed: tf.Tensor) -> tf.Tensor:
        """`count` initial states [count, *state_shape] (per leaf of a nested state), drawn with
        stateless ops from `seed` (an int32 [2] tensor that differs for every call)."""

    @abc.abstractmethod
    def step(self, state: tf.Tensor, action: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """The next states, the rewards [B] and whether each episode terminated [B] (bool)."""

    @abc.abstractmethod
    def observe(self, state: tf.Tensor) -> tf.Tensor:
        """The observations [B, *observation_space.shape] of a batch of states."""

    def initial(self, count: int, seed: tf.Tensor):
        """`initial_state(count, seed)` and its observations; an env whose initial observations
        are cheaper to look up than to compute (a bank of layouts) overrides this."""
        state = self.initial_state(count, seed)
        return state, self.observe(state)

    def give_back(self, count: tf.Tensor) -> None:
        """Told, inside the compiled call, that the last `count` initial states of the last
        draw went unused (`NativeBatchEnv` draws a few more than restart): an env that hands
        out its initial states in order (a bank of layouts) hands them out again."""
        del count  # Stateless draws need nothing.

    @property
    def name(self) -> str:
        """The environment's name in messages."""
        return type(self).__name__
