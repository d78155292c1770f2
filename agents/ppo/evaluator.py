"""Evaluator: the policy of a PPO agent as evaluation plays it, as an algorithm of its own."""

from __future__ import annotations

import tensorflow as tf

from agents.ppo.networks.contract import RecurrentState, act


class Evaluator(tf.Module):
    """The policy of a `PPO` agent on its own envs: the distribution's mode, or a sample.

    Shares the agent's network and observation normalizer (without updating it) and keeps its own
    recurrent state and, for samples, its own random generator, so evaluation never disturbs
    training rollouts or their draws.

    Args:
        agent: The `PPO` agent.
        batch_env: The evaluation envs.
        policy: "mode" (deterministic) or "sample" (the config's `eval_policy`).
        seed: Seed of the generator of sampled actions.
    """

    def __init__(self, agent, batch_env, policy: str = "mode", seed: int = 0) -> None:
        super().__init__(name="evaluator")
        if policy not in ("mode", "sample"):
            raise ValueError(f"eval_policy must be one of mode, sample, got {policy!r}.")
        self._agent = agent
        self._recurrent = RecurrentState(agent.network, len(batch_env))
        self._rng = tf.random.Generator.from_seed(seed) if policy == "sample" else None

    def begin_episode(self, agent_indices: tf.Tensor) -> None:
        self._recurrent.begin_episode(agent_indices)

    def perform(self, agent_indices: tf.Tensor, observ: tf.Tensor) -> tf.Tensor:
        del agent_indices
        observ = self._agent.normalize(observ)
        recurrent = self._recurrent
        output = act(self._agent.network, observ, recurrent.reset, recurrent.state)
        recurrent.advance(output.state)
        if self._rng is None:
            return output.policy.mode()[:, 0]
        seed = tf.cast(self._rng.make_seeds(1)[:, 0], tf.int32)  # tfp wants int32 seeds.
        return output.policy.sample(seed=seed)[:, 0]

    def experience(self, *transition) -> None:
        del transition

    def end_episode(self, agent_indices: tf.Tensor) -> None:
        del agent_indices
