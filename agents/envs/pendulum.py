"""Pendulum-v1 as TensorFlow ops: gymnasium's `PendulumEnv`, batched."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import tensorflow as tf

from agents.envs.native_env import NativeEnv

MAX_SPEED = 8.0
MAX_TORQUE = 2.0
DT = 0.05
MASS = 1.0
LENGTH = 1.0


class Pendulum(NativeEnv):
    """Swing a pendulum up and hold it: state (theta, theta_dot), observations (cos, sin, dot).

    Args:
        max_episode_steps: The time limit (200 for Pendulum-v1).
        g: Gravity, as gymnasium's `g` argument.
    """

    state_shape = (2,)

    def __init__(self, max_episode_steps: int | None = 200, g: float = 10.0) -> None:
        high = np.array([1.0, 1.0, MAX_SPEED], dtype=np.float32)
        self.observation_space = gym.spaces.Box(-high, high, dtype=np.float32)
        self.action_space = gym.spaces.Box(-MAX_TORQUE, MAX_TORQUE, (1,), np.float32)
        self.max_episode_steps = max_episode_steps
        self.g = g

    def initial_state(self, count, seed):
        high = tf.constant([math.pi, 1.0], tf.float64)
        return tf.random.stateless_uniform([count, 2], seed, dtype=tf.float64) * 2 * high - high

    def step(self, state, action):
        theta, theta_dot = tf.unstack(state, axis=1)
        # The torque terms in float32, as NumPy computes them from gymnasium's float32 action.
        torque = tf.clip_by_value(action[:, 0], -MAX_TORQUE, MAX_TORQUE)
        torque_cost = tf.cast(0.001 * torque**2, tf.float64)
        push = tf.cast(3.0 / (MASS * LENGTH**2) * torque, tf.float64)
        normalized = tf.math.floormod(theta + math.pi, 2 * math.pi) - math.pi
        costs = normalized**2 + 0.1 * theta_dot**2 + torque_cost
        theta_dot = theta_dot + (3 * self.g / (2 * LENGTH) * tf.sin(theta) + push) * DT
        theta_dot = tf.clip_by_value(theta_dot, -MAX_SPEED, MAX_SPEED)
        theta = theta + theta_dot * DT
        terminated = tf.zeros_like(theta, tf.bool)
        return tf.stack([theta, theta_dot], axis=1), tf.cast(-costs, tf.float32), terminated

    def observe(self, state):
        theta, theta_dot = tf.unstack(state, axis=1)
        return tf.cast(tf.stack([tf.cos(theta), tf.sin(theta), theta_dot], axis=1), tf.float32)
