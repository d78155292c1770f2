"""MountainCar-v0 and MountainCarContinuous-v0 as TensorFlow ops: gymnasium's, batched."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import tensorflow as tf

from agents.envs.native_env import NativeEnv

MIN_POSITION = -1.2
MAX_POSITION = 0.6
MAX_SPEED = 0.07
GRAVITY = 0.0025


class _Car(NativeEnv):
    """The car in the valley both variants share: state (position, velocity)."""

    state_shape = (2,)
    goal_position = 0.5

    def __init__(self, max_episode_steps: int | None, goal_velocity: float = 0.0) -> None:
        low = np.array([MIN_POSITION, -MAX_SPEED], dtype=np.float32)
        high = np.array([MAX_POSITION, MAX_SPEED], dtype=np.float32)
        self.observation_space = gym.spaces.Box(low, high, dtype=np.float32)
        self.max_episode_steps = max_episode_steps
        self.goal_velocity = goal_velocity

    def initial_state(self, count, seed):
        position = tf.random.stateless_uniform([count], seed, -0.6, -0.4, tf.float64)
        return tf.stack([position, tf.zeros_like(position)], axis=1)

    def _move(self, position: tf.Tensor, velocity: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """The next (position, velocity) from the position and the velocity it reaches."""
        velocity = tf.clip_by_value(velocity, -MAX_SPEED, MAX_SPEED)
        position = tf.clip_by_value(position + velocity, MIN_POSITION, MAX_POSITION)
        velocity = tf.where(
            (position == MIN_POSITION) & (velocity < 0), tf.zeros_like(velocity), velocity
        )
        return position, velocity

    def _terminated(self, position: tf.Tensor, velocity: tf.Tensor) -> tf.Tensor:
        return (position >= self.goal_position) & (velocity >= self.goal_velocity)

    def observe(self, state):
        return tf.cast(state, tf.float32)


class MountainCar(_Car):
    """Drive up the right hill with three actions (left, none, right); reward -1 per step.

    Args:
        max_episode_steps: The time limit (200 for MountainCar-v0).
        goal_velocity: The least velocity at the goal, as gymnasium's argument.
    """

    def __init__(self, max_episode_steps: int | None = 200, goal_velocity: float = 0.0) -> None:
        super().__init__(max_episode_steps, goal_velocity)
        self.action_space = gym.spaces.Discrete(3)

    def step(self, state, action):
        position, velocity = tf.unstack(state, axis=1)
        push = (tf.cast(action, tf.float64) - 1.0) * 0.001
        velocity = velocity + push + tf.cos(3 * position) * -GRAVITY
        position, velocity = self._move(position, velocity)
        terminated = self._terminated(position, velocity)
        reward = -tf.ones_like(position, tf.float32)
        return tf.stack([position, velocity], axis=1), reward, terminated


class MountainCarContinuous(_Car):
    """Drive up the right hill with a force in [-1, 1]; reward 100 at the goal minus 0.1 force².

    gymnasium keeps this variant's state in float32 after each step; so does this one.

    Args:
        max_episode_steps: The time limit (999 for MountainCarContinuous-v0).
        goal_velocity: The least velocity at the goal, as gymnasium's argument.
    """

    goal_position = 0.45

    def __init__(self, max_episode_steps: int | None = 999, goal_velocity: float = 0.0) -> None:
        super().__init__(max_episode_steps, goal_velocity)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def step(self, state, action):
        force = tf.clip_by_value(action[:, 0], -1.0, 1.0)
        position, velocity = tf.unstack(state, axis=1)
        # NumPy computes the change in float32 (the force is float32), as here.
        push = tf.cast(force * 0.0015, tf.float64)
        change = tf.cast(push - GRAVITY * tf.cos(3 * position), tf.float32)
        position, velocity = self._move(position, velocity + tf.cast(change, tf.float64))
        terminated = self._terminated(position, velocity)
        reward = tf.where(terminated, 100.0, 0.0) - tf.square(force) * 0.1
        state = tf.stack([position, velocity], axis=1)
        return tf.cast(tf.cast(state, tf.float32), tf.float64), reward, terminated
