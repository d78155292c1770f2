"""Algorithm: the four methods `simulate` calls on an agent."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import tensorflow as tf


@runtime_checkable
class Algorithm(Protocol):
    """What `tools.simulate` drives: PPO, its `Evaluator` and `MockAlgorithm` implement it.

    Every method is called inside the caller's `tf.function` with `agent_indices`, an int32 vector
    of the environments concerned (all of them for `perform` and `experience`).
    """

    def begin_episode(self, agent_indices: tf.Tensor) -> None:
        """Episodes start in these environments (their first observation comes next)."""

    def perform(self, agent_indices: tf.Tensor, observ: tf.Tensor) -> tf.Tensor:
        """Returns the actions [B, ...] for the observations [B, ...]."""

    def experience(
        self,
        agent_indices: tf.Tensor,
        observ: tf.Tensor,
        action: tf.Tensor,
        reward: tf.Tensor,
        terminated: tf.Tensor,
        truncated: tf.Tensor,
        next_observ: tf.Tensor,
    ) -> None:
        """One transition of every environment; `next_observ` is the true final one at ends."""

    def end_episode(self, agent_indices: tf.Tensor) -> None:
        """Episodes ended in these environments in the step just experienced."""
