"""Acrobot-v1 as TensorFlow ops: gymnasium's `AcrobotEnv` ("book" dynamics, RK4), batched."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import tensorflow as tf

from agents.envs.native_env import NativeEnv

DT = 0.2
LINK_LENGTH_1 = 1.0
LINK_MASS_1 = LINK_MASS_2 = 1.0
LINK_COM_POS_1 = LINK_COM_POS_2 = 0.5
LINK_MOI = 1.0
MAX_VEL_1 = 4 * math.pi
MAX_VEL_2 = 9 * math.pi
GRAVITY = 9.8
WRAPS = 3  # Whole turns `wrap` undoes; one step moves an angle by less than one turn.


class Acrobot(NativeEnv):
    """Swing the tip of a two-link chain above a line: state (theta1, theta2, dtheta1, dtheta2),
    reward -1 per step until it terminates.

    Args:
        max_episode_steps: The time limit (500 for Acrobot-v1).
    """

    state_shape = (4,)

    def __init__(self, max_episode_steps: int | None = 500) -> None:
        high = np.array([1.0, 1.0, 1.0, 1.0, MAX_VEL_1, MAX_VEL_2], dtype=np.float32)
        self.observation_space = gym.spaces.Box(-high, high, dtype=np.float32)
        self.action_space = gym.spaces.Discrete(3)
        self.max_episode_steps = max_episode_steps

    def initial_state(self, count, seed):
        # gymnasium draws in float64 and stores float32.
        draw = tf.random.stateless_uniform([count, 4], seed, -0.1, 0.1, tf.float64)
        return tf.cast(tf.cast(draw, tf.float32), tf.float64)

    def step(self, state, action):
        torque = tf.cast(action, tf.float64) - 1.0  # Actions 0, 1, 2: torques -1, 0, +1.
        half = DT / 2.0
        k1 = _derivatives(state, torque)
        k2 = _derivatives(state + half * k1, torque)
        k3 = _derivatives(state + half * k2, torque)
        k4 = _derivatives(state + DT * k3, torque)
        state = state + DT / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        theta1, theta2, dtheta1, dtheta2 = tf.unstack(state, axis=1)
        theta1, theta2 = _wrap(theta1), _wrap(theta2)
        dtheta1 = tf.clip_by_value(dtheta1, -MAX_VEL_1, MAX_VEL_1)
        dtheta2 = tf.clip_by_value(dtheta2, -MAX_VEL_2, MAX_VEL_2)
        terminated = -tf.cos(theta1) - tf.cos(theta2 + theta1) > 1.0
        reward = tf.where(terminated, 0.0, -1.0)
        return tf.stack([theta1, theta2, dtheta1, dtheta2], axis=1), reward, terminated

    def observe(self, state):
        theta1, theta2, dtheta1, dtheta2 = tf.unstack(state, axis=1)
        observ = [tf.cos(theta1), tf.sin(theta1), tf.cos(theta2), tf.sin(theta2), dtheta1, dtheta2]
        return tf.cast(tf.stack(observ, axis=1), tf.float32)


def _derivatives(state: tf.Tensor, torque: tf.Tensor) -> tf.Tensor:
    """gymnasium's `_dsdt`, term for term (the same float64 rounding)."""
    m1, m2, l1, lc1, lc2, i1, i2, g = (
        LINK_MASS_1,
        LINK_MASS_2,
        LINK_LENGTH_1,
        LINK_COM_POS_1,
        LINK_COM_POS_2,
        LINK_MOI,
        LINK_MOI,
        GRAVITY,
    )
    theta1, theta2, dtheta1, dtheta2 = tf.unstack(state, axis=1)
    d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * tf.cos(theta2)) + i1 + i2
    d2 = m2 * (lc2**2 + l1 * lc2 * tf.cos(theta2)) + i2
    phi2 = m2 * lc2 * g * tf.cos(theta1 + theta2 - math.pi / 2.0)
    phi1 = (
        -m2 * l1 * lc2 * dtheta2**2 * tf.sin(theta2)
        - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * tf.sin(theta2)
        + (m1 * lc1 + m2 * l1) * g * tf.cos(theta1 - math.pi / 2)
        + phi2
    )
    ddtheta2 = (torque + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1**2 * tf.sin(theta2) - phi2) / (
        m2 * lc2**2 + i2 - d2**2 / d1
    )
    ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return tf.stack([dtheta1, dtheta2, ddtheta1, ddtheta2], axis=1)


def _wrap(angle: tf.Tensor) -> tf.Tensor:
    """gymnasium's `wrap` into [-pi, pi]: whole turns subtracted, then added, one at a time."""
    for _ in range(WRAPS):
        angle = tf.where(angle > math.pi, angle - 2 * math.pi, angle)
    for _ in range(WRAPS):
        angle = tf.where(angle < -math.pi, angle + 2 * math.pi, angle)
    return angle
