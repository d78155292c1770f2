"""Visits within an episode: NovelD's episodic gate (Zhang et al., 2021) and the episodic
count bonus (Henaff et al., 2023, "Revisiting Intrinsic Reward for Exploration").

An observation is keyed by a hash of its values into one of `buckets` per env; a table holds,
for each env and bucket, the episode in which it was last seen and how often it was seen in
that episode. An observation's count is its bucket's visits in the same episode up to it:
earlier in the rollout (compared pairwise) and in earlier rollouts (the table, where its episode
is the same). A first visit is a count of 1. Episodes are numbered per env, so nothing is
cleared when one ends. Two observations that share a bucket count as one (with 16,384 buckets
and a few hundred distinct views per episode, a new view is taken for a seen one about 2% of
the time).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

# Coefficients below 2**16 times 32-bit words sum without overflowing int64 for observations
# of up to 2**15 values (a 56x56 frame has 3,136).
_COEFFICIENT_BITS = 16
_PRIME = 2**31 - 1


def observation_keys(observ: tf.Tensor, coefficients: tf.Tensor, buckets: int) -> tf.Tensor:
    """Hash bucket of each observation: the bits of its float32 values, dotted with
    `coefficients` (int64 [*shape], each in [1, 2**16)), modulo the prime 2**31 - 1, then
    modulo `buckets` (a universal hash).

    Args:
      observ: [..., *shape] observations (any real dtype).
      coefficients: int64 [*shape].
      buckets: Number of buckets.

    Returns:
      int32 [...] bucket indices in [0, buckets).

    Raises:
      ValueError: For observations that do not end in `shape`.
    """
    rank = coefficients.shape.rank
    if observ.shape[observ.shape.rank - rank :] != coefficients.shape:
        raise ValueError(
            f"observations {observ.shape} do not end in {coefficients.shape.num_elements()} "
            f"values of shape {coefficients.shape}"
        )
    words = tf.bitcast(tf.cast(observ, tf.float32), tf.int32)
    words = tf.bitwise.bitwise_and(tf.cast(words, tf.int64), 0xFFFFFFFF)
    # Modulo a prime first: float32 words of small integers end in many zero bits.
    hashed = tf.reduce_sum(words * coefficients, axis=list(range(-rank, 0)))
    return tf.cast(tf.math.floormod(hashed, _PRIME) % buckets, tf.int32)


def counts_in_episode(keys: tf.Tensor, episodes: tf.Tensor) -> tf.Tensor:
    """How often each key [T, N] occurred in its episode within the rollout up to and including
    its step: the steps t' <= t of the same env with the same key and episode number (int32)."""
    same = (keys[:, None] == keys[None]) & (episodes[:, None] == episodes[None])  # [t', t, N]
    steps = keys.shape[0] or tf.shape(keys)[0]
    upto = tf.linalg.band_part(tf.ones([steps, steps], tf.bool), 0, -1)  # t' <= t
    return tf.reduce_sum(tf.cast(same & upto[:, :, None], tf.int32), axis=0)


def count_bonus(counts: tf.Tensor) -> tf.Tensor:
    """The episodic count bonus of visits counted `counts` times (>= 1): 1 / sqrt(count)."""
    return tf.math.rsqrt(tf.cast(counts, tf.float32))


def first_in_episode(keys: tf.Tensor, episodes: tf.Tensor) -> tf.Tensor:
    """Whether each key [T, N] is the first of its value in its episode within the rollout:
    no earlier step of the same env has the same key and the same episode number."""
    same = (keys[:, None] == keys[None]) & (episodes[:, None] == episodes[None])  # [t', t, N]
    steps = keys.shape[0] or tf.shape(keys)[0]
    earlier = tf.linalg.band_part(tf.ones([steps, steps], tf.bool), 0, -1)  # t' <= t
    earlier &= ~tf.eye(steps, dtype=tf.bool)  # t' < t
    return ~tf.reduce_any(same & earlier[:, :, None], axis=0)


class EpisodicVisits(tf.Module):
    """Per-env memory of the observation buckets seen in the current episode.

    Args:
      num_envs: Envs of the batch (the rollout's second dimension).
      observation_shape: Shape of one observation.
      buckets: Hash buckets per env.
      seed: Seed of the hash's coefficients.
    """

    def __init__(
        self, num_envs: int, observation_shape: tuple[int, ...], buckets: int, seed: int = 0
    ):
        super().__init__(name="episodic_visits")
        if np.prod(observation_shape) >= 2 ** (63 - 32 - _COEFFICIENT_BITS):
            raise ValueError(
                f"episodic visits hash observations of fewer than 2**15 values; got "
                f"{observation_shape}"
            )
        rng = np.random.default_rng(seed)
        self.buckets = buckets
        self.coefficients = tf.constant(
            rng.integers(1, 2**_COEFFICIENT_BITS, size=observation_shape), tf.int64
        )
        # Transient, as the envs' episodes are: a resumed run restarts every env, and episodes
        # counted from 0 against an empty table again.
        with self.name_scope:
            self.last_seen = tf.Variable(
                tf.fill([num_envs, buckets], -1), trainable=False, name="last_seen"
            )
            self.episode = tf.Variable(
                tf.zeros([num_envs], tf.int32), trainable=False, name="episode"
            )
            self.count = tf.Variable(
                tf.zeros([num_envs, buckets], tf.int32), trainable=False, name="count"
            )

    def keys(self, observ: tf.Tensor) -> tf.Tensor:
        """Bucket of each observation [..., *shape] of the env (not normalized), int32 [...]."""
        return observation_keys(observ, self.coefficients, self.buckets)

    def first_visits(self, keys: tf.Tensor, starts: tf.Tensor) -> tf.Tensor:
        """Marks first visits in a rollout and remembers its observations (see `visit_counts`).

        Returns:
          bool [T, N]: whether observation t is the first of its bucket in its episode.
        """
        return self.visit_counts(keys, starts) == 1

    def visit_counts(self, keys: tf.Tensor, starts: tf.Tensor) -> tf.Tensor:
        """Counts the visits of a rollout's observations in their episodes and remembers them.

        Args:
          keys: int32 [T, N]: `keys()` of the observations, in the order the envs made them.
          starts: bool [T, N]: observation t is the first of a new episode (the step before it
            ended one).

        Returns:
          int32 [T, N]: observation t's visits to its bucket in its episode, itself included.
        """
        episodes = self.episode[None] + tf.cumsum(tf.cast(starts, tf.int32), axis=0)
        seen = tf.transpose(tf.gather(self.last_seen, tf.transpose(keys), batch_dims=1))
        before = tf.transpose(tf.gather(self.count, tf.transpose(keys), batch_dims=1))
        counts = counts_in_episode(keys, episodes) + tf.where(seen == episodes, before, 0)
        # Each bucket's last visit in the rollout holds its latest episode and count: written
        # alone, so no two writes go to one entry.
        steps = keys.shape[0] or tf.shape(keys)[0]
        later = tf.linalg.band_part(tf.ones([steps, steps], tf.bool), -1, 0)  # t' >= t
        later &= ~tf.eye(steps, dtype=tf.bool)
        last = ~tf.reduce_any((keys[:, None] == keys[None]) & later[:, :, None], axis=0)
        envs = tf.broadcast_to(tf.range(tf.shape(keys)[1])[None], tf.shape(keys))
        where = tf.where(last)  # [K, 2]: (t, n) of the last visits.
        indices = tf.stack([tf.gather_nd(envs, where), tf.gather_nd(keys, where)], -1)
        self.last_seen.scatter_nd_update(indices, tf.gather_nd(episodes, where))
        self.count.scatter_nd_update(indices, tf.gather_nd(counts, where))
        self.episode.assign(episodes[-1])
        return counts
