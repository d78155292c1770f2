"""Running normalization in TensorFlow: the mean and variance of everything seen, in float64
variables merged across MPI ranks (`RunningMeanStd`), and what PPO normalizes with them:
observations (`StreamingNormalize`) and rewards by the deviation of their discounted sums
(`RewardScaler`). Each is checkpointable and runs eagerly or inside `tf.function`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from agents.tools.collectives import CrossReplicaSum, mpi_cross_replica_sum

TensorLike = tf.types.experimental.TensorLike


def combine_moments(
    mean_a: TensorLike,
    var_a: TensorLike,
    count_a: TensorLike,
    mean_b: TensorLike,
    var_b: TensorLike,
    count_b: TensorLike,
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Merges the moments of two disjoint samples (the parallel algorithm of Chan et al., 1979).

    With `delta = mean_b - mean_a` and `count = count_a + count_b`:
    `mean = mean_a + delta * count_b / count` and
    `var = (var_a * count_a + var_b * count_b + delta**2 * count_a * count_b / count) / count`,
    the population mean and variance of both samples concatenated. Unlike differencing sums of
    squares, this stays accurate when the mean is large relative to the spread.

    Args:
      mean_a: Mean of the first sample.
      var_a: Population variance of the first sample.
      count_a: Scalar size of the first sample (may be fractional, e.g. a prior pseudo-count).
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
    value: TensorLike,
    shape: Sequence[int],
    cross_replica_sum: CrossReplicaSum | None = None,
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Mean, population variance and count of a batch, over all ranks when a sum is given.

    Args:
      value: Tensor of shape `[..., *shape]`; the leading dimensions are flattened into the batch.
      shape: Shape of one sample.
      cross_replica_sum: Function summing a float64 tensor over MPI ranks, or None.

    Returns:
      `(mean, var, count)` as float64 tensors; mean and variance 0 for an empty batch.

    Raises:
      ValueError: If the trailing dimensions of `value` do not match `shape`.
    """
    shape = [int(d) for d in shape]
    value = tf.convert_to_tensor(value)
    if value.shape.rank is not None:
        trailing = value.shape[max(value.shape.rank - len(shape), 0) :]
        if not trailing.is_compatible_with(shape):
            raise ValueError(f"Expected samples of shape {shape}, got a tensor of {value.shape}.")
    value = tf.reshape(tf.cast(value, tf.float64), [-1, *shape])
    count = tf.cast(tf.shape(value)[0], tf.float64)
    mean = tf.math.divide_no_nan(tf.reduce_sum(value, 0), count)
    var = tf.math.divide_no_nan(tf.reduce_sum(tf.square(value - mean), 0), count)
    if cross_replica_sum is not None:
        return _reduce_moments(mean, var, count, cross_replica_sum)
    return mean, var, count


def _reduce_moments(
    mean: tf.Tensor, var: tf.Tensor, count: tf.Tensor, cross_replica_sum: CrossReplicaSum
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """The moments of every rank's sample concatenated, from each rank's own moments.

    Two reductions: count and sum give the global mean, around which every rank then sums its
    squared deviations (its `var * count` plus `count * (mean - global)**2`). Summing raw
    squares instead would lose precision.
    """
    shape = mean.shape
    packed = cross_replica_sum(tf.concat([count[None], tf.reshape(mean * count, [-1])], 0))
    total_count = packed[0]
    total_mean = tf.math.divide_no_nan(tf.reshape(packed[1:], shape), total_count)
    m2 = cross_replica_sum(var * count + count * tf.square(mean - total_mean))
    return total_mean, tf.math.divide_no_nan(m2, total_count), total_count


class _Deferred:
    """A rank's samples since the last `sync` and the statistics it started from.

    A plain object, so that its variables are not part of the module's checkpoint (nor of its
    `variables`): the caller syncs before every save, which leaves nothing pending, and `base`
    is taken afresh from the statistics by the first `accumulate` after a sync or a restore.
    """

    def __init__(self, shape: tuple[int, ...]) -> None:
        zeros = tf.zeros(shape, tf.float64)
        self.mean = tf.Variable(zeros, trainable=False, name="pending_mean")
        self.var = tf.Variable(zeros, trainable=False, name="pending_var")
        self.count = tf.Variable(tf.constant(0.0, tf.float64), trainable=False)
        self.base = [  # Mean, variance and count at the last sync.
            tf.Variable(zeros, trainable=False, name="base_mean"),
            tf.Variable(zeros, trainable=False, name="base_var"),
            tf.Variable(tf.constant(0.0, tf.float64), trainable=False, name="base_count"),
        ]


class RunningMeanStd(tf.Module):
    """Mean and variance of every sample seen so far, as in OpenAI baselines and RND.

    The statistics are non-trainable float64 variables (`mean`, `var`, `count`): after millions of
    samples a float32 count and mean lose the digits a new batch contributes. They are saved by
    `tf.train.Checkpoint(stats=obj)`, and `update` runs eagerly or inside `tf.function`. Each update
    computes the batch moments and merges them with `combine_moments`.

    With an MPI sum (`cross_replica_sum` or `comm`), the batch moments are first reduced over all
    ranks (an allreduce of count and sum, then one of the squared deviations from the global batch
    mean), so every rank holds the statistics of all ranks' data concatenated. `update` is then a
    collective: every rank must call it the same number of times (an empty batch is allowed).
    Alternatively `accumulate` adds a batch on this rank alone and `sync`, called by every rank at
    one point (e.g. once per rollout), merges what all ranks accumulated since the last sync.

    The statistics start at mean 0, variance 1 with a pseudo-count of `epsilon`, so dividing by
    `std` is safe before the first update; with `epsilon=0` they are exactly those of the data and
    the first update replaces the prior.

    Attributes:
      mean: float64 variable of `shape`.
      var: float64 variable of `shape`, the population variance.
      count: float64 scalar variable, the number of samples seen (plus `epsilon`).
    """

    def __init__(
        self,
        shape: Sequence[int] = (),
        epsilon: float = 1e-4,
        cross_replica_sum: CrossReplicaSum | None = None,
        comm: Any | None = None,
        name: str = "running_mean_std",
    ):
        """Creates the statistics.

        Args:
          shape: Shape of one sample.
          epsilon: Initial pseudo-count of the prior mean 0, variance 1.
          cross_replica_sum: Function summing a float64 tensor over MPI ranks (see
            `agents.tools.collectives.mpi_cross_replica_sum`); it wins over `comm` when both are
            given.
          comm: Optional `mpi4py.MPI.Comm`, converted with `mpi_cross_replica_sum`.
          name: Name of the module and its variable scope.
        """
        super().__init__(name=name)
        self.shape = tuple(int(d) for d in shape)
        if cross_replica_sum is None:
            cross_replica_sum = mpi_cross_replica_sum(comm)
        self._cross_replica_sum = cross_replica_sum
        with self.name_scope:
            self.count = tf.Variable(
                tf.constant(epsilon, tf.float64), trainable=False, name="count"
            )
            self.mean = tf.Variable(tf.zeros(self.shape, tf.float64), trainable=False, name="mean")
            self.var = tf.Variable(tf.ones(self.shape, tf.float64), trainable=False, name="var")
        # What `accumulate` keeps until `sync` (MPI only).
        self._deferred = _Deferred(self.shape) if cross_replica_sum is not None else None

    @property
    def std(self) -> tf.Tensor:
        """Standard deviation, `sqrt(var)`, float64."""
        return tf.sqrt(self.var)

    def update(self, x: TensorLike) -> None:
        """Adds a batch of samples.

        Args:
          x: Tensor of shape `[..., *shape]`; the leading dimensions are flattened into the batch.

        Raises:
          ValueError: If the trailing dimensions of `x` do not match `shape`.
        """
        batch_mean, batch_var, batch_count = _batch_moments(x, self.shape, self._cross_replica_sum)
        mean, var, count = combine_moments(
            self.mean, self.var, self.count, batch_mean, batch_var, batch_count
        )
        self.mean.assign(mean)
        self.var.assign(var)
        self.count.assign(count)

    def accumulate(self, x: TensorLike) -> None:
        """Adds a batch of this rank's samples without a collective; `sync` shares them.

        Under MPI, `update` is a collective at every call, so every rank waits for the slowest
        one at every environment step. `accumulate` merges the batch into this rank's
        statistics at once (so they follow its own data, as `update` would) and keeps it
        pending; `sync`, called by every rank at the same point (e.g. once per rollout),
        replaces each rank's statistics with those of all ranks' samples. Between syncs the
        ranks' statistics differ; right after one they are identical. In a single process
        `accumulate` is `update`.

        Args:
          x: Tensor of shape `[..., *shape]`; the leading dimensions are flattened into the batch.
        """
        if self._deferred is None:
            self.update(x)
            return
        pending = self._deferred
        fresh = tf.equal(pending.count, 0.0)  # The statistics are shared ones: keep them.
        for base, value in zip(pending.base, (self.mean, self.var, self.count)):
            base.assign(tf.where(fresh, value, base))
        batch = _batch_moments(x, self.shape)
        merged = combine_moments(pending.mean, pending.var, pending.count, *batch)
        for variable, value in zip((pending.mean, pending.var, pending.count), merged):
            variable.assign(value)
        merged = combine_moments(self.mean, self.var, self.count, *batch)
        for variable, value in zip((self.mean, self.var, self.count), merged):
            variable.assign(value)

    def sync(self) -> None:
        """Give every rank the statistics of all samples `accumulate`d on all ranks.

        A collective (two reductions) every rank must call at the same point; nothing to do in
        a single process.
        """
        if self._deferred is None:
            return
        pending = self._deferred
        shared = _reduce_moments(pending.mean, pending.var, pending.count, self._cross_replica_sum)
        fresh = tf.equal(pending.count, 0.0)  # Nothing of this rank's: its statistics are shared.
        stats = (self.mean, self.var, self.count)
        base = [tf.where(fresh, value, old) for value, old in zip(stats, pending.base)]
        merged = combine_moments(*base, *shared)
        for variable, value in zip(stats, merged):
            variable.assign(value)
        pending.mean.assign(tf.zeros_like(pending.mean))
        pending.var.assign(tf.zeros_like(pending.var))
        pending.count.assign(0.0)


class StreamingNormalize(RunningMeanStd):
    """Normalizes values by the running mean and variance of everything passed to `update`.

    A `RunningMeanStd` without a prior (count 0, so the statistics are exactly those of the data)
    plus `transform`. The statistics are non-trainable float64 variables (`count`, `mean`, `var`),
    so `tf.train.Checkpoint(normalizer=obj)` saves and restores them, and the methods run eagerly
    or inside `tf.function`. Before the first update they are mean 0, variance 1: `transform` is
    the identity (up to `epsilon` and clipping), and the first update replaces them with the batch
    statistics.

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
        normalized: np.ndarray | None = None,
    ):
        """Creates the statistics.

        Args:
          shape: Shape of one sample.
          center: Whether `transform` subtracts the mean.
          scale: Whether `transform` divides by the standard deviation.
          clip: Bound of the transformed values to `[-clip, clip]`, or None for no clipping.
          epsilon: Added to the variance before taking the square root (not a prior count).
          cross_replica_sum: Function summing a float64 tensor over MPI ranks (see
            `agents.tools.collectives.mpi_cross_replica_sum`); None in a single process.
          name: Name of the module and its variable scope.
          normalized: Optional bool array of `shape`: the entries `transform` normalizes; the
            others pass through unchanged (e.g. the one-hots and the action mask of a packed dict
            observation). None normalizes all.
        """
        super().__init__(shape, epsilon=0.0, cross_replica_sum=cross_replica_sum, name=name)
        self.normalized = None if normalized is None else tf.constant(normalized, tf.bool)
        self._center = center
        self._scale = scale
        self._clip = clip
        self._var_epsilon = epsilon

    def transform(self, value: tf.Tensor) -> tf.Tensor:
        """Returns `(value - mean) / sqrt(var + epsilon)`, clipped, as float32.

        Args:
          value: Tensor of shape `[..., *shape]`.

        Returns:
          float32 tensor of the same shape.
        """
        value = raw = tf.cast(value, tf.float64)
        if self._center:
            value -= self.mean
        if self._scale:
            value /= tf.sqrt(self.var + self._var_epsilon)
        if self._clip is not None:
            value = tf.clip_by_value(value, -self._clip, self._clip)
        if self.normalized is not None:
            value = tf.where(self.normalized, value, raw)
        return tf.cast(value, tf.float32)

    def summary(self) -> dict[str, tf.Tensor]:
        """Scalars for TensorBoard: the average mean and standard deviation, and the count."""
        return {
            "mean": tf.reduce_mean(self.mean),
            "std": tf.reduce_mean(self.std),
            "count": self.count,
        }


class RewardScaler(tf.Module):
    """Divides rewards by the running std of the discounted return (Engstrom et al., 2020).

    Each environment keeps a running discounted return `ret_t = gamma * (1 - done_{t-1}) * ret_{t-1}
    + reward_t`. Every call adds the returns it computes to a running variance, and rewards are
    divided by its standard deviation without being centered (shifting rewards would change the
    task). The running returns and the statistics are variables, so a checkpoint keeps both.

    `scale` takes one step of an episodic reward (the environment's: episode ends cut the
    return); `scale_rollout` a whole [T, B] rollout of a non-episodic one (RND's intrinsic
    reward, whose return continues across episode ends, as novelty does not stop at a game over).
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
        self.return_stats.accumulate(returns)  # Under MPI shared by `sync`.
        self.returns.assign(returns * (1.0 - tf.cast(done, tf.float64)))
        return self.return_stats.transform(reward)

    def sync(self) -> None:
        """Under MPI, give every rank the return statistics of all ranks' `scale` calls
        (a collective; see `RunningMeanStd.accumulate`)."""
        self.return_stats.sync()

    def scale_rollout(self, reward: tf.Tensor) -> tf.Tensor:
        """Updates the statistics with a rollout's returns and returns its scaled rewards.

        The return is non-episodic: it runs on across episode ends.

        Args:
          reward: Rewards [T, num_envs] of one rollout, in time order.

        Returns:
          float32 [T, num_envs]: the rewards divided by the std of all discounted returns seen so
          far, this rollout's included (clipped when configured).
        """
        reward = tf.cast(reward, tf.float64)
        returns = tf.scan(lambda ret, r: ret * self._gamma + r, reward, initializer=self.returns)
        self.return_stats.update(returns)
        self.returns.assign(returns[-1])
        return self.return_stats.transform(reward)
