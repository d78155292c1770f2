"""In-graph running normalization of observations and rewards, checkpointable and MPI-aware."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import tensorflow as tf

CrossReplicaSum = Callable[[tf.Tensor], tf.Tensor]


def combine_moments(
    mean_a: tf.Tensor,
    var_a: tf.Tensor,
    count_a: tf.Tensor,
    mean_b: tf.Tensor,
    var_b: tf.Tensor,
    count_b: tf.Tensor,
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Merges the moments of two disjoint samples (the parallel algorithm of Chan et al., 1979).

    With `delta = mean_b - mean_a` and `count = count_a + count_b`:
    `mean = mean_a + delta * count_b / count` and
    `var = (var_a * count_a + var_b * count_b + delta**2 * count_a * count_b / count) / count`,
    the population mean and variance of both samples concatenated. Computed in float64.

    Args:
      mean_a: Mean of the first sample.
      var_a: Population variance of the first sample.
      count_a: Scalar size of the first sample.
      mean_b: Mean of the second sample.
      var_b: Population variance of the second sample.
      count_b: Scalar size of the second sample.

    Returns:
      `(mean, var, count)` of the union as float64 tensors; the first sample's moments where the
      total count is 0.
    """
    mean_a, var_a, count_a, mean_b, var_b, count_b = (
        tf.cast(x, tf.float64) for x in (mean_a, var_a, count_a, mean_b, var_b, count_b)
    )
    count = count_a + count_b
    weight_b = tf.math.divide_no_nan(count_b, count)
    delta = mean_b - mean_a
    mean = mean_a + delta * weight_b
    m2 = var_a * count_a + var_b * count_b + tf.square(delta) * count_a * weight_b
    var = tf.where(count > 0, tf.math.divide_no_nan(m2, count), var_a)
    return mean, var, count


def _batch_moments(
    value: tf.Tensor, shape: tuple[int, ...], cross_replica_sum: CrossReplicaSum | None
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Mean, variance and count of `value` [..., *shape], over all ranks when a sum is given."""
    value = tf.convert_to_tensor(value)
    if value.shape.rank is not None:
        value.shape[value.shape.rank - len(shape) :].assert_is_compatible_with(shape)
    value = tf.reshape(tf.cast(value, tf.float64), [-1, *shape])
    count = tf.cast(tf.shape(value)[0], tf.float64)
    total = tf.reduce_sum(value, 0)
    if cross_replica_sum is not None:
        # Two exact reductions: count and sum give the global mean, around which every rank then
        # sums its squared deviations. Summing raw squares instead would lose precision.
        packed = cross_replica_sum(tf.concat([count[None], tf.reshape(total, [-1])], 0))
        count, total = packed[0], tf.reshape(packed[1:], shape)
    mean = tf.math.divide_no_nan(total, count)
    m2 = tf.reduce_sum(tf.square(value - mean), 0)
    if cross_replica_sum is not None:
        m2 = cross_replica_sum(m2)
    return mean, tf.math.divide_no_nan(m2, count), count


class StreamingNormalize(tf.Module):
    """Normalizes values by the running mean and variance of everything passed to `update`.

    The statistics live in non-trainable float64 variables (`count`, `mean`, `var`), so
    `tf.train.Checkpoint(normalizer=obj)` saves and restores them, and the methods run eagerly or
    inside `tf.function` without Python side effects. They start at mean 0, variance 1 and count 0:
    `transform` is the identity (up to `epsilon` and clipping) until the first update, and the first
    update replaces them with the batch statistics.

    With `cross_replica_sum`, `update` first reduces the batch moments over all MPI ranks, so every
    rank holds the statistics of all ranks' data concatenated; `update` is then a collective that
    every rank must call the same number of times (an empty batch is allowed).
    """

    def __init__(
        self,
        shape: Sequence[int] = (),
        center: bool = True,
        scale: bool = True,
        clip: float | None = 5.0,
        epsilon: float = 1e-8,
        cross_replica_sum: CrossReplicaSum | None = None,
        name: str = "streaming_normalize",
    ):
        """Creates the statistics.

        Args:
          shape: Shape of one sample.
          center: Whether `transform` subtracts the mean.
          scale: Whether `transform` divides by the standard deviation.
          clip: Bound of the transformed values to `[-clip, clip]`, or None for no clipping.
          epsilon: Added to the variance before taking the square root.
          cross_replica_sum: Function summing a float64 tensor over MPI ranks (see
            `agents.tools.mpi.mpi_cross_replica_sum`); None in a single process.
          name: Name of the module and its variable scope.
        """
        super().__init__(name=name)
        self._shape = tuple(int(d) for d in shape)
        self._center = center
        self._scale = scale
        self._clip = clip
        self._epsilon = epsilon
        self._cross_replica_sum = cross_replica_sum
        with self.name_scope:
            self.count = tf.Variable(tf.zeros([], tf.float64), trainable=False, name="count")
            self.mean = tf.Variable(tf.zeros(self._shape, tf.float64), trainable=False, name="mean")
            self.var = tf.Variable(tf.ones(self._shape, tf.float64), trainable=False, name="var")

    def update(self, value: tf.Tensor) -> None:
        """Adds a batch of samples of shape `[..., *shape]` (leading dimensions are flattened)."""
        batch_mean, batch_var, batch_count = _batch_moments(
            value, self._shape, self._cross_replica_sum
        )
        mean, var, count = combine_moments(
            self.mean, self.var, self.count, batch_mean, batch_var, batch_count
        )
        self.mean.assign(mean)
        self.var.assign(var)
        self.count.assign(count)

    def transform(self, value: tf.Tensor) -> tf.Tensor:
        """Returns `(value - mean) / sqrt(var + epsilon)`, clipped, as float32.

        Args:
          value: Tensor of shape `[..., *shape]`.

        Returns:
          float32 tensor of the same shape.
        """
        value = tf.cast(value, tf.float64)
        if self._center:
            value -= self.mean
        if self._scale:
            value /= tf.sqrt(self.var + self._epsilon)
        if self._clip is not None:
            value = tf.clip_by_value(value, -self._clip, self._clip)
        return tf.cast(value, tf.float32)

    def summary(self) -> dict[str, tf.Tensor]:
        """Scalars for TensorBoard: the average mean and standard deviation, and the count."""
        return {
            "mean": tf.reduce_mean(self.mean),
            "std": tf.reduce_mean(tf.sqrt(self.var)),
            "count": self.count,
        }


class RewardScaler(tf.Module):
    """Divides rewards by the running std of the discounted return (Engstrom et al., 2020).

    Each environment keeps a running discounted return `ret_t = gamma * (1 - done_{t-1}) * ret_{t-1}
    + reward_t`. Every `scale` call adds the current returns to a running variance, and rewards are
    divided by its standard deviation without being centered (shifting rewards would change the
    task). The running returns and the statistics are variables, so a checkpoint keeps both.
    """

    def __init__(
        self,
        num_envs: int,
        gamma: float = 0.99,
        clip: float | None = 10.0,
        epsilon: float = 1e-8,
        cross_replica_sum: CrossReplicaSum | None = None,
        name: str = "reward_scaler",
    ):
        """Creates the running returns and their statistics.

        Args:
          num_envs: Number of environments in the batch.
          gamma: Discount factor of the return.
          clip: Bound of the scaled rewards to `[-clip, clip]`, or None for no clipping.
          epsilon: Added to the variance before taking the square root.
          cross_replica_sum: Function summing a float64 tensor over MPI ranks, or None.
          name: Name of the module and its variable scope.
        """
        super().__init__(name=name)
        self._gamma = gamma
        with self.name_scope:
            self.returns = tf.Variable(
                tf.zeros([num_envs], tf.float64), trainable=False, name="returns"
            )
            self.return_stats = StreamingNormalize(
                (),
                center=False,
                clip=clip,
                epsilon=epsilon,
                cross_replica_sum=cross_replica_sum,
                name="return_stats",
            )

    def scale(self, reward: tf.Tensor, done: tf.Tensor) -> tf.Tensor:
        """Updates the statistics with this step and returns the scaled rewards.

        Args:
          reward: Rewards of this step, shape [num_envs].
          done: Whether this step ended the episode (terminated or truncated), shape [num_envs]; the
            environment's return restarts from zero at its next step.

        Returns:
          float32 rewards divided by the std of the discounted return, clipped.
        """
        reward = tf.cast(reward, tf.float64)
        returns = self.returns * self._gamma + reward
        self.return_stats.update(returns)
        self.returns.assign(returns * (1.0 - tf.cast(done, tf.float64)))
        return self.return_stats.transform(reward)
