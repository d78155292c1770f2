"""StreamingMean: the running mean of batches of values, as TensorFlow variables."""

import tensorflow as tf


class StreamingMean(tf.Module):
    """Compute a streaming estimate of the mean of submitted tensors.

    Values are summed in float64 so that long phases do not lose precision.

    Args:
        shape: Shape of one value.
        dtype: Dtype of the returned mean.
    """

    def __init__(self, shape=(), dtype=tf.float32, name: str = "streaming_mean"):
        super().__init__(name=name)
        self._dtype = dtype
        self._sum = tf.Variable(tf.zeros(shape, tf.float64), trainable=False)
        self._count = tf.Variable(0, dtype=tf.int64, trainable=False)

    @property
    def value(self) -> tf.Tensor:
        """The current mean (zero when nothing was submitted)."""
        count = tf.cast(tf.maximum(self._count, 1), tf.float64)
        return tf.cast(self._sum / count, self._dtype)

    @property
    def count(self) -> tf.Tensor:
        return self._count.read_value()

    def submit(self, value) -> None:
        """Add a batch of values of shape [N, *shape]."""
        value = tf.cast(tf.convert_to_tensor(value), tf.float64)
        self._sum.assign_add(tf.reduce_sum(value, 0))
        self._count.assign_add(tf.cast(tf.shape(value)[0], tf.int64))

    def clear(self) -> tf.Tensor:
        """Return the mean and reset the estimate."""
        value = self.value
        self._sum.assign(tf.zeros_like(self._sum))
        self._count.assign(0)
        return value
