"""Masked categorical and multi-categorical heads against numpy, and by hand."""

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents.ppo.networks.distributions import (
    CategoricalHead,
    MultiCategoricalHead,
    check_mask_size,
)


def _log_softmax_allowed(logits, mask):
    """Slow reference: log-probabilities over the allowed entries only (-inf elsewhere)."""
    out = np.full(logits.shape, -np.inf)
    for row in range(len(logits)):
        allowed = mask[row]
        shifted = logits[row, allowed] - logits[row, allowed].max()
        out[row, allowed] = shifted - np.log(np.exp(shifted).sum())
    return out


def _head(num_actions=5, features=3):
    head = CategoricalHead(num_actions, 1.0)
    head.build((None, features))
    return head


def test_masked_categorical_matches_the_numpy_reference():
    rng = np.random.default_rng(0)
    head = _head()
    features = rng.normal(size=(6, 3)).astype(np.float32)
    mask = rng.random((6, 5)) < 0.5
    mask[np.arange(6), rng.integers(0, 5, 6)] = True  # At least one allowed per row.
    policy = head(tf.constant(features), tf.constant([2, 3]), action_mask=tf.constant(mask))
    logits = head._logits(tf.constant(features)).numpy().astype(np.float64)
    reference = _log_softmax_allowed(logits, mask)
    actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
    log_prob = policy.log_prob(actions.reshape(2, 3)).numpy().reshape(-1)
    np.testing.assert_allclose(log_prob, reference[np.arange(6), actions], rtol=1e-5)
    probs = np.where(mask, np.exp(reference), 0.0)
    entropy = -np.sum(probs * np.where(mask, reference, 0.0), axis=1)
    np.testing.assert_allclose(policy.entropy().numpy().reshape(-1), entropy, rtol=1e-5)
    mode = policy.mode().numpy().reshape(-1)
    np.testing.assert_array_equal(mode, np.where(mask, logits, -np.inf).argmax(axis=1))
    samples = policy.sample(2000, seed=1).numpy().reshape(2000, 6)
    assert mask[np.arange(6), samples].all()  # Never a masked action.
    frequency = np.stack([(samples == a).mean(axis=0) for a in range(5)], axis=1)
    np.testing.assert_allclose(frequency, probs, atol=0.05)


def test_masked_categorical_by_hand():
    head = _head(num_actions=3, features=1)
    head._logits.kernel.assign([[0.0, np.log(2.0), 5.0]])
    policy = head(
        tf.ones([1, 1]), tf.constant([1, 1]), action_mask=tf.constant([[True, True, False]])
    )
    np.testing.assert_allclose(policy.probs_parameter().numpy()[0, 0], [1 / 3, 2 / 3, 0], 1e-6)
    entropy = -(1 / 3 * np.log(1 / 3) + 2 / 3 * np.log(2 / 3))
    np.testing.assert_allclose(policy.entropy().numpy()[0, 0], entropy, rtol=1e-6)
    assert policy.mode().numpy()[0, 0] == 1  # Action 2's logit is the largest, but masked.


def test_masked_multi_categorical_reads_the_mask_entry_by_entry():
    rng = np.random.default_rng(1)
    nvec = np.array([2, 3])
    head = MultiCategoricalHead(nvec, 1.0)
    head.build((None, 4))
    features = tf.constant(rng.normal(size=(4, 4)), tf.float32)
    mask = np.array(  # Entry 0's two choices, then entry 1's three.
        [[1, 0, 1, 1, 0], [0, 1, 0, 0, 1], [1, 1, 1, 0, 1], [1, 0, 0, 1, 0]], bool
    )
    policy = head(features, tf.constant([4, 1]), action_mask=tf.constant(mask))
    logits = tf.reshape(head._logits(features), [4, 2, 3]).numpy().astype(np.float64)
    samples = policy.sample(500, seed=2).numpy()[:, :, 0]  # [500, 4, 2]
    assert mask[np.arange(4)[None], samples[..., 0]].all()
    assert mask[np.arange(4)[None], 2 + samples[..., 1]].all()
    actions = np.array([[0, 0], [1, 2], [1, 2], [0, 1]])
    expected = _log_softmax_allowed(logits[:, 0, :2], mask[:, :2])[np.arange(4), actions[:, 0]]
    expected += _log_softmax_allowed(logits[:, 1], mask[:, 2:])[np.arange(4), actions[:, 1]]
    log_prob = policy.log_prob(actions[:, None]).numpy()[:, 0]
    np.testing.assert_allclose(log_prob, expected, rtol=1e-5)


def test_mask_sizes_that_do_not_fit_the_action_space_are_refused():
    check_mask_size(4, gym.spaces.Discrete(4), "net")
    check_mask_size(5, gym.spaces.MultiDiscrete([2, 3]), "net")
    with pytest.raises(ValueError, match="has 3 entries; Discrete\\(4\\) takes 4"):
        check_mask_size(3, gym.spaces.Discrete(4), "net")
    with pytest.raises(ValueError, match="needs a Discrete or MultiDiscrete action space"):
        check_mask_size(2, gym.spaces.Box(-1, 1, (2,)), "net")
