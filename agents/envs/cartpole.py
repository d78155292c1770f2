"""CartPole-v1 as TensorFlow ops: gymnasium's `CartPoleEnv`, batched."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import tensorflow as tf

from agents.envs.native_env import NativeEnv

GRAVITY = 9.8
MASS_CART = 1.0
MASS_POLE = 0.1
TOTAL_MASS = MASS_POLE + MASS_CART
LENGTH = 0.5  # Half the pole's length.
POLE_MASS_LENGTH = MASS_POLE * LENGTH
FORCE = 10.0
TAU = 0.02  # Seconds per step (explicit Euler).
THETA_THRESHOLD = 12 * 2 * math.pi / 360
X_THRESHOLD = 2.4


class CartPole(NativeEnv):
    """Balance a pole on a cart: state (x, x_dot, theta, theta_dot), reward 1 per step.

    Args:
        max_episode_steps: The time limit (500 for CartPole-v1, 200 for v0).
    """

    state_shape = (4,)

    def __init__(self, max_episode_steps: int | None = 500) -> None:
        high = np.array([X_THRESHOLD * 2, np.inf, THETA_THRESHOLD * 2, np.inf], np.float32)
        self.observation_space = gym.spaces.Box(-high, high, dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.max_episode_steps = max_episode_steps

    def initial_state(self, count, seed):
        return tf.random.stateless_uniform([count, 4], seed, -0.05, 0.05, tf.float64)

    def step(self, state, action):
        x, x_dot, theta, theta_dot = tf.unstack(state, axis=1)
        force = tf.where(tf.equal(action, 1), FORCE, -FORCE)
        force = tf.cast(force, tf.float64)
        cos, sin = tf.cos(theta), tf.sin(theta)
        temp = (force + POLE_MASS_LENGTH * tf.square(theta_dot) * sin) / TOTAL_MASS
        theta_acc = (GRAVITY * sin - cos * temp) / (
            LENGTH * (4.0 / 3.0 - MASS_POLE * tf.square(cos) / TOTAL_MASS)
        )
        x_acc = temp - POLE_MASS_LENGTH * theta_acc * cos / TOTAL_MASS
        x, x_dot = x + TAU * x_dot, x_dot + TAU * x_acc
        theta, theta_dot = theta + TAU * theta_dot, theta_dot + TAU * theta_acc
        terminated = (
            (x < -X_THRESHOLD)
            | (x > X_THRESHOLD)
            | (theta < -THETA_THRESHOLD)
            | (theta > THETA_THRESHOLD)
        )
        reward = tf.ones_like(x, tf.float32)
        return tf.stack([x, x_dot, theta, theta_dot], axis=1), reward, terminated

    def observe(self, state):
        return tf.cast(state, tf.float32)
