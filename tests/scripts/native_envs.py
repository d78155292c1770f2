"""A user's native env, registered on import for `--set env=tests.scripts.native_envs:...`."""

import gymnasium as gym
import numpy as np
import tensorflow as tf

from agents import envs
from agents.envs import NativeEnv


class Corridor(NativeEnv):
    """Walk right 6 cells to the goal (+1, -0.01 a step); rendered as a strip of 7 cells."""

    state_shape = (1,)
    state_dtype = tf.float32
    max_episode_steps = 30
    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def initial_state(self, count, seed):
        return tf.zeros([count, 1])

    def step(self, state, action):
        move = tf.cast(2 * action - 1, tf.float32)[:, None]
        state = tf.clip_by_value(state + move, 0.0, 6.0)
        terminated = state[:, 0] >= 6.0
        return state, tf.where(terminated, 1.0, -0.01), terminated

    def observe(self, state):
        return state / 6.0

    def render(self, state):
        """A 16 x 112 frame: the agent's cell white, the goal's green."""
        frame = np.zeros((16, 112, 3), np.uint8)
        frame[:, 96:112, 1] = 255
        cell = int(np.asarray(state)[0, 0])
        frame[:, 16 * cell : 16 * cell + 16] = 255
        return frame


class Blind(Corridor):
    """The same corridor without frames."""

    render = None


envs.register("Corridor-v0", Corridor)
envs.register("BlindCorridor-v0", Blind)


class FarCorridor(Corridor):
    """The corridor observed as 1e30 from its fourth cell on: a faulty sensor."""

    def observe(self, state):
        return tf.where(state >= 3.0, 1e30, state / 6.0)


envs.register("FarCorridor-v0", FarCorridor)


class PrintingCorridor(Corridor):
    """The corridor that prints its state: tf.print has no XLA kernel."""

    def step(self, state, action):
        tf.print(state)
        return super().step(state, action)


class NumpyCorridor(Corridor):
    """The corridor that reads its state as numpy: no graph can hold that."""

    def observe(self, state):
        return tf.constant(state.numpy() / 6.0)


envs.register("PrintingCorridor-v0", PrintingCorridor)
envs.register("NumpyCorridor-v0", NumpyCorridor)
