"""MockAlgorithm: the algorithm protocol with random actions, for testing the simulation tools."""

import tensorflow as tf


class MockAlgorithm(tf.Module):
    """Chooses random valid actions and does no learning.

    Implements the algorithm protocol that `tools.simulate` drives: `begin_episode`, `perform`,
    `experience` and `end_episode`. It counts the calls of each method in tf.Variables so tests can
    see what the simulation step asked of it.

    Args:
        batch_env: An `InGraphBatchEnv` (used for its action space and batch size).
        seed: Seed of the action sampler.
    """

    def __init__(self, batch_env, seed: int = 0):
        super().__init__(name="mock_algorithm")
        self._space = batch_env.action_space
        self._rng = tf.random.Generator.from_seed(seed)
        size = len(batch_env)
        self.begun = tf.Variable(tf.zeros([size], tf.int32), trainable=False)
        self.experienced = tf.Variable(tf.zeros([size], tf.int32), trainable=False)
        self.ended = tf.Variable(tf.zeros([size], tf.int32), trainable=False)

    def begin_episode(self, agent_indices):
        self._count(self.begun, agent_indices)

    def perform(self, agent_indices, observ):
        batch = tf.shape(agent_indices)[0]
        space = self._space
        if hasattr(space, "n"):  # Discrete
            start = int(getattr(space, "start", 0))
            return self._rng.uniform([batch], start, start + int(space.n), tf.int32)
        if hasattr(space, "nvec"):  # MultiDiscrete
            nvec = tf.constant(space.nvec, tf.float32)
            shape = tf.concat([[batch], tf.shape(nvec)], 0)
            return tf.cast(tf.floor(self._rng.uniform(shape) * nvec), tf.int32)
        low, high = tf.constant(space.low, tf.float32), tf.constant(space.high, tf.float32)
        shape = tf.concat([[batch], tf.shape(low)], 0)
        return low + (high - low) * self._rng.uniform(shape)

    def experience(self, agent_indices, observ, action, reward, terminated, truncated, next_observ):
        self._count(self.experienced, agent_indices)

    def end_episode(self, agent_indices):
        self._count(self.ended, agent_indices)

    def _count(self, variable, agent_indices):
        ones = tf.ones_like(agent_indices, tf.int32)
        variable.scatter_nd_add(agent_indices[:, None], ones)
