"""In-graph running normalization of observations and rewards, checkpointable and MPI-aware."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from agents.tools.mpi import CrossReplicaSum
from agents.tools.running_mean_std import RunningMeanStd


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
            `agents.tools.mpi.mpi_cross_replica_sum`); None in a single process.
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
