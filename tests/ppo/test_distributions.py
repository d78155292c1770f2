"""The categorical sampler: inverse CDF against numpy, by hand, and with masked entries."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from agents.ppo.networks.distributions import MASKED_LOGIT, Categorical, inverse_cdf


def _reference(logits: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """Slow numpy inverse CDF: per draw, the first category whose CDF exceeds it."""
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    flat_probs, flat_u = probs.reshape(-1, probs.shape[-1]), uniform.reshape(-1)
    out = [int(np.searchsorted(np.cumsum(p), u, side="right")) for p, u in zip(flat_probs, flat_u)]
    return np.minimum(np.array(out), probs.shape[-1] - 1).reshape(uniform.shape)


def test_inverse_cdf_by_hand():
    logits = np.log([[0.2, 0.5, 0.3]] * 6).astype(np.float32)
    uniform = np.array([0.0, 0.1999, 0.2001, 0.6999, 0.7001, 0.9999], np.float32)
    assert inverse_cdf(logits, uniform).numpy().tolist() == [0, 0, 1, 1, 2, 2]


def test_inverse_cdf_matches_the_numpy_reference():
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 2, (5, 7, 4)).astype(np.float32)
    uniform = rng.uniform(0, 1, (5, 7)).astype(np.float32)
    result = inverse_cdf(logits, uniform).numpy()
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, _reference(logits.astype(np.float64), uniform))


def test_masked_entries_are_never_chosen_even_by_the_largest_draw():
    # Softmax rounding leaves the valid probabilities' sum below 1 for some logits; the
    # largest float32 below 1 would then fall past them without the CDF's normalization.
    valid = [-0.7364541, -0.16290995, -0.48211932, 0.5988462]  # Softmax sums to 0.9999999.
    logits = np.array([valid + [MASKED_LOGIT, MASKED_LOGIT]] * 3, np.float32)
    softmax_sum = tf.reduce_sum(tf.nn.softmax(logits[:1]), -1).numpy()[0]
    largest = np.nextafter(np.float32(1), np.float32(0))
    assert softmax_sum < largest  # The case the normalization is for.
    uniform = np.array([0.0, 0.5, largest], np.float32)
    assert inverse_cdf(logits, uniform).numpy().tolist() == [0, 2, 3]


def test_samples_follow_the_probabilities_and_a_seed_reproduces_them():
    probs = np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]], np.float32)
    policy = Categorical(logits=np.log(probs), dtype=tf.int32)
    seed = tf.constant([4, 2], tf.int32)
    draws = policy.sample(40_000, seed=seed).numpy()
    assert draws.shape == (40_000, 2) and draws.dtype == np.int32
    frequencies = np.stack([(draws == k).mean(0) for k in range(3)], axis=1)
    np.testing.assert_allclose(frequencies, probs, atol=5 * 0.5 / np.sqrt(40_000))
    np.testing.assert_array_equal(policy.sample(40_000, seed=seed).numpy(), draws)
    other = policy.sample(40_000, seed=tf.constant([4, 3], tf.int32)).numpy()
    assert not np.array_equal(other, draws)
    for seed in (None, 7, np.int64(7), (4, 2)):  # Stateful-op seeds and a stateless pair too.
        assert policy.sample(3, seed=seed).numpy().shape == (3, 2)
