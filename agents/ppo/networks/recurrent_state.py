"""RecurrentState: a policy's recurrent state per environment and where episodes start."""

from __future__ import annotations

import tensorflow as tf


class RecurrentState(tf.Module):
    """The state a recurrent policy carries between steps, per environment, and episode starts.

    `begin_episode` marks environments whose next step starts an episode (the network zeroes
    their state then); `advance` stores the state after a step and clears the marks. Both are
    variables, transient: a resumed run restarts every episode. Feed-forward networks carry an
    empty [B, 0] state.

    Args:
        network: Has `initial_state(batch_size)`.
        size: Number of environments.
    """

    def __init__(self, network, size: int) -> None:
        super().__init__(name="recurrent")
        self.state = tf.Variable(
            network.initial_state(size), trainable=False, name="recurrent_state"
        )
        self.reset = tf.Variable(tf.ones([size], tf.bool), trainable=False, name="episode_start")

    def begin_episode(self, indices: tf.Tensor) -> None:
        """Episodes start at `indices` with their next step."""
        self.reset.scatter_nd_update(indices[:, None], tf.ones_like(indices, tf.bool))

    def advance(self, state: tf.Tensor) -> None:
        """Store the state after a step of every environment."""
        self.state.assign(state)
        self.reset.assign(tf.zeros_like(self.reset))
