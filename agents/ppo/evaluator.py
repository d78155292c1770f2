"""Evaluator: the deterministic policy of a PPO agent, as an algorithm of its own."""

from __future__ import annotations

import tensorflow as tf


class Evaluator(tf.Module):
    """The deterministic policy of a `PPO` agent (the distribution's mode) on its own envs.

    Shares the agent's network and observation normalizer (without updating it) and keeps its own
    recurrent state, so evaluation never disturbs training rollouts.
    """

    def __init__(self, agent, batch_env) -> None:
        super().__init__(name="evaluator")
        self._agent = agent
        self._state = tf.Variable(agent.network.initial_state(len(batch_env)), trainable=False)
        self._new = tf.Variable(tf.ones([len(batch_env)], tf.bool), trainable=False)

    def begin_episode(self, agent_indices: tf.Tensor) -> None:
        self._new.scatter_nd_update(agent_indices[:, None], tf.ones_like(agent_indices, tf.bool))

    def perform(self, agent_indices: tf.Tensor, observ: tf.Tensor) -> tf.Tensor:
        del agent_indices
        observ = self._agent.normalize(observ)
        output = self._agent.network(observ[:, None], self._new[:, None], self._state)
        self._state.assign(output.state)
        self._new.assign(tf.zeros_like(self._new))
        return output.policy.mode()[:, 0]

    def experience(self, *transition) -> None:
        del transition

    def end_episode(self, agent_indices: tf.Tensor) -> None:
        del agent_indices
