"""RolloutBuffer: fixed-length [time, batch] storage of transitions in TensorFlow variables."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import tensorflow as tf


class RolloutBuffer(tf.Module):
    """Stores `length` time steps of a batch of environments, one time step at a time.

    Each field is a non-trainable variable of shape [length, batch, *shape]. A time step may be
    written in several calls (the algorithm writes what it knows when acting, then what the
    environment returned) before `advance` moves on to the next one.

    Args:
        specs: Field name -> `tf.TensorSpec` of one environment's value.
        length: Number of time steps.
        batch_size: Number of environments.
    """

    def __init__(self, specs: Mapping[str, tf.TensorSpec], length: int, batch_size: int) -> None:
        super().__init__(name="rollout_buffer")
        self.length = length
        with self.name_scope:
            self._fields = {
                key: tf.Variable(
                    tf.zeros([length, batch_size] + spec.shape.as_list(), spec.dtype),
                    trainable=False,
                    name=key,
                )
                for key, spec in specs.items()
            }
            self.index = tf.Variable(0, dtype=tf.int32, trainable=False, name="index")

    @property
    def fields(self) -> dict[str, tf.Variable]:
        """The variables of the fields, [length, batch, ...]; read them between calls only."""
        return dict(self._fields)

    def write(self, values: Mapping[str, tf.Tensor]) -> None:
        """Write fields of the current time step."""
        # One read of the index and one scatter op per field, with a scalar index (update shape
        # [batch, ...]): each op costs about a microsecond to dispatch, every simulation step.
        index = self.index.read_value()
        for key, value in values.items():
            if self._fields[key].shape.num_elements() == 0:
                continue  # E.g. the [B, 0] state placeholder of feed-forward networks.
            self._fields[key].scatter_update(tf.IndexedSlices(value, index))

    def advance(self) -> tf.Tensor:
        """Move to the next time step; returns whether the buffer is now full."""
        self.index.assign_add(1)
        return self.full()

    def full(self) -> tf.Tensor:
        """Whether every time step is written (until `clear`)."""
        return self.index >= self.length

    def data(self) -> dict[str, tf.Tensor]:
        """All fields, [length, batch, ...]."""
        return {key: field.read_value() for key, field in self._fields.items()}

    def assign(self, key: str, value: tf.Tensor) -> None:
        """Overwrite a whole field, [length, batch, ...] (e.g. the advantages of the rollout)."""
        self._fields[key].assign(value)

    def clear(self) -> None:
        self.index.assign(0)


def transition_specs(
    observ_space, action: tf.Variable, state: tf.Variable, normalized: bool
) -> dict:
    """Specs of what PPO stores per step and env (its value streams add their own fields).

    The buffer holds what the network sees: normalized observations are float32.
    """
    observ_dtype = tf.uint8 if observ_space.dtype == np.uint8 and not normalized else tf.float32
    return dict(
        observ=tf.TensorSpec(observ_space.shape, observ_dtype),
        action=tf.TensorSpec(action.shape[1:], action.dtype),
        log_prob=tf.TensorSpec([], tf.float32),
        reset=tf.TensorSpec([], tf.bool),
        state=tf.TensorSpec(state.shape[1:], state.dtype),
        reward=tf.TensorSpec([], tf.float32),
        terminated=tf.TensorSpec([], tf.bool),
        truncated=tf.TensorSpec([], tf.bool),
    )
