"""Export a trained policy as a TensorFlow SavedModel that needs no `agents` import to run."""

from __future__ import annotations

import tensorflow as tf


class _ExportedPolicy(tf.Module):
    """Raw observations in, deterministic actions out, with the observation normalizer inside."""

    def __init__(self, agent) -> None:
        super().__init__(name="policy")
        self._agent = agent
        # Tracked explicitly: SavedModel, like checkpoints, misses nested Keras 3 layers.
        self.weights = list(agent.network.variables)
        self.normalizer = agent.observ_normalizer
        network = agent.network
        observ_spec = tf.TensorSpec(
            [None, *agent.observation_space.shape], agent.observation_space.dtype, name="observ"
        )
        state_spec = tf.TensorSpec([None, *network.initial_state(1).shape[1:]], tf.float32)
        self.__call__ = tf.function(self._act, input_signature=[observ_spec])
        self.step = tf.function(
            self._step,
            input_signature=[observ_spec, tf.TensorSpec([None], tf.bool, name="reset"), state_spec],
        )
        self.initial_state = tf.function(
            lambda batch_size: network.initial_state(batch_size),
            input_signature=[tf.TensorSpec([], tf.int32, name="batch_size")],
        )

    def _act(self, observ: tf.Tensor) -> tf.Tensor:
        """Actions for a batch of observations, each the first step of its episode."""
        batch = tf.shape(observ)[0]
        state = self._agent.network.initial_state(batch)
        action, _ = self._step(observ, tf.ones([batch], tf.bool), state)
        return action

    def _step(self, observ: tf.Tensor, reset: tf.Tensor, state: tf.Tensor):
        """One step of a recurrent policy: returns (action, new state)."""
        output = self._agent.network(self._agent.normalize(observ)[:, None], reset[:, None], state)
        return output.policy.mode()[:, 0], output.state


def export_policy(agent, path: str) -> str:
    """Save `agent`'s deterministic policy as a SavedModel at `path`.

    The loaded object (`tf.saved_model.load(path)`) is callable on a batch of raw observations
    and returns the mode of the policy, normalization included. Recurrent policies also offer
    `step(observ, reset, state) -> (action, state)` and `initial_state(batch_size)`.

    Returns:
        The path.
    """
    tf.saved_model.save(_ExportedPolicy(agent), path)
    return path
