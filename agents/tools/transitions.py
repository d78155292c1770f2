"""Transitions: the latest step of a batch of environments, held in TensorFlow variables."""

from __future__ import annotations

import tensorflow as tf


class Transitions(tf.Module):
    """The variables `tools.simulate` reads from a batch environment, and their two updates.

    `observ`, `action`, `reward`, `terminated`, `truncated` and `done` (either of the two) hold
    the latest transition; `score` and `length` the return and length of the running episodes.
    `done` starts True, so that the first simulation step resets every environment. The batch
    environments (`InGraphBatchEnv`, `envs.NativeBatchEnv`) derive from it.

    Args:
        name: The module's name.
        size: Number of environments.
        observ: Shape and dtype of one observation.
        action: Shape and dtype of one action.
    """

    def __init__(
        self, name: str, size: int, observ: tuple[tuple, tf.DType], action: tuple[tuple, tf.DType]
    ) -> None:
        super().__init__(name=name)
        variable = lambda value, name: tf.Variable(value, trainable=False, name=name)  # noqa: E731
        self.observ = variable(tf.zeros((size, *observ[0]), observ[1]), "observ")
        self.action = variable(tf.zeros((size, *action[0]), action[1]), "action")
        self.reward = variable(tf.zeros([size], tf.float32), "reward")
        self.terminated = variable(tf.zeros([size], tf.bool), "terminated")
        self.truncated = variable(tf.zeros([size], tf.bool), "truncated")
        self.done = variable(tf.ones([size], tf.bool), "done")
        self.score = variable(tf.zeros([size], tf.float32), "score")
        self.length = variable(tf.zeros([size], tf.int32), "length")

    def checkpointables(self) -> dict:
        """What a run's checkpoint holds of the batch (nothing by default: episodes restart)."""
        return {}

    def raise_if_nonfinite(self) -> None:
        """Raise FloatingPointError for a non-finite value recorded inside a compiled call.

        Nothing by default: batches of Python envs check each result as it arrives.
        """

    def _record(self, action, observ, reward, terminated, truncated) -> None:
        """Store one step of every environment; episodes grow by one step."""
        self.action.assign(action)
        self.observ.assign(observ)
        self.reward.assign(reward)
        self.terminated.assign(terminated)
        self.truncated.assign(truncated)
        self.done.assign(terminated | truncated)
        self.score.assign_add(reward)
        self.length.assign_add(tf.ones_like(self.length))

    # Whether `reset_where(mask)` restarts episodes in place (`tools.simulate` then calls it at
    # every step, without a branch and without indices of data-dependent size).
    resets_in_place = False

    def _restart_where(self, mask: tf.Tensor, observ: tf.Tensor) -> None:
        """New episodes where `mask` [B] is True, starting from those rows of `observ` [B, ...]."""
        rows = tf.reshape(mask, [-1] + [1] * (len(observ.shape) - 1))
        self.observ.assign(tf.where(rows, observ, self.observ))
        for value in (self.reward, self.score, self.length):
            value.assign(tf.where(mask, tf.zeros_like(value), value))
        for flag in (self.terminated, self.truncated, self.done):
            flag.assign(flag & tf.logical_not(mask))

    def _restart(self, indices: tf.Tensor, observ: tf.Tensor) -> None:
        """New episodes at `indices`, starting from `observ`."""
        rows = indices[:, None]
        count = tf.shape(indices)[0]
        self.observ.scatter_nd_update(rows, observ)
        for value in (self.reward, self.score):
            value.scatter_nd_update(rows, tf.zeros([count]))
        self.length.scatter_nd_update(rows, tf.zeros([count], tf.int32))
        for flag in (self.terminated, self.truncated, self.done):
            flag.scatter_nd_update(rows, tf.zeros([count], tf.bool))
