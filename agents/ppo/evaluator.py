"""Evaluator: the deterministic policy of a PPO agent, as an algorithm of its own."""

from __future__ import annotations

import tensorflow as tf

from agents.ppo.networks.contract import act
from agents.ppo.networks.recurrent_state import RecurrentState


class Evaluator(tf.Module):
    """The deterministic policy of a `PPO` agent (the distribution's mode) on its own envs.

    Shares the agent's network and observation normalizer (without updating it) and keeps its own
    recurrent state, so evaluation never disturbs training rollouts.
    """

    def __init__(self, agent, batch_env) -> None:
        super().__init__(name="evaluator")
        self._agent = agent
        self._recurrent = RecurrentState(agent.network, len(batch_env))

    def begin_episode(self, agent_indices: tf.Tensor) -> None:
        self._recurrent.begin_episode(agent_indices)

    def perform(self, agent_indices: tf.Tensor, observ: tf.Tensor) -> tf.Tensor:
        del agent_indices
        observ = self._agent.normalize(observ)
        recurrent = self._recurrent
        output = act(self._agent.network, observ, recurrent.reset, recurrent.state)
        recurrent.advance(output.state)
        return output.policy.mode()[:, 0]

    def experience(self, *transition) -> None:
        del transition

    def end_episode(self, agent_indices: tf.Tensor) -> None:
        del agent_indices
