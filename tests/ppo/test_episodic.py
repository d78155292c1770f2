"""Tests for NovelD's episodic gate: first visits within an episode, keyed by a hash."""

import numpy as np
import pytest
import tensorflow as tf

from agents.ppo.exploration.episodic import (
    EpisodicVisits,
    count_bonus,
    first_in_episode,
    observation_keys,
)


def _reference(rollouts, num_envs):
    """First visits by sets: one set per env, emptied where an episode starts."""
    seen = [set() for _ in range(num_envs)]
    flags = []
    for keys, starts in rollouts:
        out = np.zeros(keys.shape, bool)
        for t in range(keys.shape[0]):
            for n in range(num_envs):
                if starts[t, n]:
                    seen[n] = set()
                out[t, n] = keys[t, n] not in seen[n]
                seen[n].add(keys[t, n])
        flags.append(out)
    return flags


def test_first_visits_by_hand():
    visits = EpisodicVisits(num_envs=2, observation_shape=(1,), buckets=8)
    keys = tf.constant([[3, 0], [3, 1], [5, 0]], tf.int32)
    starts = tf.constant([[False, False], [False, False], [False, True]])
    first = visits.first_visits(keys, starts).numpy()
    # Env 0: 3 new, 3 seen, 5 new. Env 1: 0 new, 1 new, 0 again but in a new episode.
    np.testing.assert_array_equal(first, [[True, True], [False, True], [True, True]])
    # The next rollout continues the episodes: env 0 has seen 3 and 5, env 1 only 0.
    first = visits.first_visits(tf.constant([[5, 1], [4, 0]]), tf.zeros([2, 2], tf.bool))
    np.testing.assert_array_equal(first.numpy(), [[False, True], [True, False]])
    np.testing.assert_array_equal(visits.episode.numpy(), [0, 1])


@pytest.mark.parametrize("compiled", [False, True])
def test_first_visits_equal_a_set_per_episode_over_rollouts(compiled):
    rng = np.random.default_rng(3)
    steps, num_envs, buckets = 16, 5, 64
    rollouts = [
        (
            rng.integers(0, 12, (steps, num_envs)).astype(np.int32),
            rng.random((steps, num_envs)) < 0.1,
        )
        for _ in range(4)
    ]
    visits = EpisodicVisits(num_envs, observation_shape=(1,), buckets=buckets)
    call = tf.function(visits.first_visits, jit_compile=True) if compiled else visits.first_visits
    got = [call(tf.constant(k), tf.constant(s)).numpy() for k, s in rollouts]
    for mine, reference in zip(got, _reference(rollouts, num_envs), strict=True):
        np.testing.assert_array_equal(mine, reference)
    np.testing.assert_array_equal(visits.episode.numpy(), sum(s.sum(0) for _, s in rollouts))


def test_first_in_episode_within_one_rollout():
    keys = tf.constant([[1], [2], [1], [1]])
    episodes = tf.constant([[0], [0], [0], [1]])
    np.testing.assert_array_equal(first_in_episode(keys, episodes).numpy()[:, 0], [1, 1, 0, 1])


def test_observation_keys_equal_for_equal_observations_and_spread_otherwise():
    rng = np.random.default_rng(1)
    coefficients = EpisodicVisits(1, (7, 7, 3), 16384, seed=0).coefficients
    views = rng.integers(0, 11, (4000, 7, 7, 3)).astype(np.float32)  # MiniGrid-like cells.
    keys = observation_keys(tf.constant(views.reshape(40, 100, 7, 7, 3)), coefficients, 16384)
    assert keys.shape == (40, 100)
    again = observation_keys(tf.constant(views[:5]), coefficients, 16384).numpy()
    np.testing.assert_array_equal(again, keys.numpy().reshape(-1)[:5])
    # A universal hash: as many distinct buckets as 4,000 uniform draws of 16,384 fill.
    expected = 16384 * (1 - np.exp(-4000 / 16384))
    assert abs(len(np.unique(keys.numpy())) - expected) < 60
    # Small integers as float32 end in zero bits; a power-of-two modulus alone maps them all
    # to one bucket. Views that differ in one cell get different keys.
    one = views[:1].copy()
    other = one.copy()
    other[0, 3, 3, 0] += 1
    pair = observation_keys(tf.constant(np.concatenate([one, other])), coefficients, 16384)
    assert pair[0] != pair[1]


def test_observation_keys_reject_observations_of_another_size():
    coefficients = EpisodicVisits(1, (7, 7, 3), 64).coefficients
    with pytest.raises(ValueError, match="do not end in 147 values"):
        observation_keys(tf.zeros([4, 7, 7, 2]), coefficients, 64)


def _reference_counts(rollouts, num_envs):
    """Visits by dicts: one counter per env, emptied where an episode starts."""
    seen = [{} for _ in range(num_envs)]
    counts = []
    for keys, starts in rollouts:
        out = np.zeros(keys.shape, np.int32)
        for t in range(keys.shape[0]):
            for n in range(num_envs):
                if starts[t, n]:
                    seen[n] = {}
                seen[n][keys[t, n]] = out[t, n] = seen[n].get(keys[t, n], 0) + 1
        counts.append(out)
    return counts


def test_visit_counts_by_hand_and_the_count_bonus():
    visits = EpisodicVisits(num_envs=1, observation_shape=(1,), buckets=8)
    keys = tf.constant([[3], [3], [5], [3]], tf.int32)
    starts = tf.constant([[False], [False], [False], [True]])
    counts = visits.visit_counts(keys, starts)
    np.testing.assert_array_equal(counts.numpy()[:, 0], [1, 2, 1, 1])  # A new episode at t=3.
    counts = visits.visit_counts(tf.constant([[3], [3], [5]]), tf.zeros([3, 1], tf.bool))
    np.testing.assert_array_equal(counts.numpy()[:, 0], [2, 3, 1])  # 5 was the last episode's.
    np.testing.assert_allclose(
        count_bonus(tf.constant([1, 2, 3, 4])).numpy(), [1.0, 2**-0.5, 3**-0.5, 0.5], rtol=1e-6
    )


@pytest.mark.parametrize("compiled", [False, True])
def test_visit_counts_equal_a_counter_per_episode_over_rollouts(compiled):
    rng = np.random.default_rng(5)
    steps, num_envs, buckets = 16, 5, 64
    rollouts = [
        (
            rng.integers(0, 6, (steps, num_envs)).astype(np.int32),
            rng.random((steps, num_envs)) < 0.08,
        )
        for _ in range(5)
    ]
    visits = EpisodicVisits(num_envs, observation_shape=(1,), buckets=buckets)
    call = tf.function(visits.visit_counts, jit_compile=True) if compiled else visits.visit_counts
    got = [call(tf.constant(k), tf.constant(s)).numpy() for k, s in rollouts]
    for mine, reference in zip(got, _reference_counts(rollouts, num_envs), strict=True):
        np.testing.assert_array_equal(mine, reference)
    assert max(count.max() for count in got) > 3  # Repeats across rollouts were counted.
