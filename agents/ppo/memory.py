"""RolloutBuffer: fixed-length [time, batch] storage of transitions in TensorFlow variables."""

from __future__ import annotations

from collections.abc import Mapping

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
        for key, value in values.items():
            if self._fields[key].shape.num_elements() == 0:
                continue  # E.g. the [B, 0] state placeholder of feed-forward networks.
            self._fields[key].scatter_nd_update([[self.index]], value[None])

    def advance(self) -> tf.Tensor:
        """Move to the next time step; returns whether the buffer is now full."""
        self.index.assign_add(1)
        return self.index >= self.length

    def data(self) -> dict[str, tf.Tensor]:
        """All fields, [length, batch, ...]."""
        return {key: field.read_value() for key, field in self._fields.items()}

    def assign(self, key: str, value: tf.Tensor) -> None:
        """Overwrite a whole field, [length, batch, ...] (e.g. the advantages of the rollout)."""
        self._fields[key].assign(value)

    def clear(self) -> None:
        self.index.assign(0)
