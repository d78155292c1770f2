"""Tests for agents.ppo.losses against slow python references and hand-computed cases."""

import math

import numpy as np
import pytest
import tensorflow as tf

from agents.ppo import losses
from tests.floats import assert_float32_close


def _random_batch(seed: int, size: int = 32) -> dict:
    rng = np.random.default_rng(seed)
    old_log_prob = rng.normal(-1.0, 0.5, size).astype(np.float32)
    return dict(
        log_prob=old_log_prob + rng.normal(0.0, 0.3, size).astype(np.float32),
        old_log_prob=old_log_prob,
        advantage=rng.normal(size=size).astype(np.float32),
    )


def _ratios(log_prob, old_log_prob):
    return [math.exp(a - b) for a, b in zip(log_prob, old_log_prob, strict=True)]


def _naive_approx_kl(old_log_prob, new_log_prob):
    """Slow python loop, for testing only."""
    terms = [(r - 1.0) - math.log(r) for r in _ratios(new_log_prob, old_log_prob)]
    return sum(terms) / len(terms)


def _naive_clip_loss(log_prob, old_log_prob, advantage, clip_ratio, dual_clip=None):
    """Slow python loop, for testing only; returns (loss, clipfrac)."""
    objectives, clipped = [], []
    for ratio, adv in zip(_ratios(log_prob, old_log_prob), advantage, strict=True):
        bounded = min(max(ratio, 1.0 - clip_ratio), 1.0 + clip_ratio)
        objective = min(ratio * adv, bounded * adv)
        if dual_clip is not None and adv < 0:
            objective = max(objective, dual_clip * adv)
        objectives.append(objective)
        clipped.append(abs(ratio - 1.0) > clip_ratio)
    return -sum(objectives) / len(objectives), sum(clipped) / len(clipped)


def _naive_kl_penalty_loss(log_prob, old_log_prob, advantage, kl, beta, target, factor, coef):
    """Slow python loop, for testing only."""
    ratios = _ratios(log_prob, old_log_prob)
    loss = -sum(r * a for r, a in zip(ratios, advantage, strict=True)) / len(ratios) + beta * kl
    if factor is not None and kl > factor * target:
        loss += coef * (kl - factor * target) ** 2
    return loss


def _naive_value_loss(value, old_value, returns, clip_range):
    """Slow python loop, for testing only."""
    errors = []
    for v, old_v, ret in zip(value, old_value, returns, strict=True):
        error = (v - ret) ** 2
        if clip_range is not None:
            clipped = old_v + min(max(v - old_v, -clip_range), clip_range)
            error = max(error, (clipped - ret) ** 2)
        errors.append(error)
    return 0.5 * sum(errors) / len(errors)


def _log(*ratios):
    """Log-probabilities that give these ratios against an old log-probability of 0."""
    return np.log(np.array(ratios, np.float32))


def test_approx_kl_matches_naive_reference():
    b = _random_batch(seed=0)
    kl = losses.approx_kl(b["old_log_prob"], b["log_prob"])
    assert_float32_close(kl, _naive_approx_kl(b["old_log_prob"], b["log_prob"]))


def test_approx_kl_hand_computed():
    # ratios [2, 1]: k3 terms (2 - 1) - ln 2 = 0.3068528 and (1 - 1) - 0 = 0; mean 0.1534264.
    kl = losses.approx_kl(np.zeros(2, np.float32), _log(2.0, 1.0))
    assert_float32_close(kl, 0.1534264)


def test_approx_kl_is_non_negative_and_zero_for_equal_policies():
    for seed in range(5):
        b = _random_batch(seed=seed)
        assert losses.approx_kl(b["old_log_prob"], b["log_prob"]).numpy() >= 0.0
    assert losses.approx_kl(b["old_log_prob"], b["old_log_prob"]).numpy() == 0.0


def test_clip_policy_loss_matches_naive_reference():
    b = _random_batch(seed=1)
    loss, clipfrac = losses.clip_policy_loss(**b, clip_ratio=0.2)
    expected_loss, expected_clipfrac = _naive_clip_loss(**b, clip_ratio=0.2)
    assert 0.0 < expected_clipfrac < 1.0
    assert_float32_close(loss, expected_loss)
    np.testing.assert_allclose(clipfrac, expected_clipfrac)


def test_clip_policy_loss_hand_computed():
    # eps 0.2; per sample min(ratio * A, clip(ratio, 0.8, 1.2) * A):
    # ratio 1.5, A  1: min( 1.5,  1.2) =  1.2
    # ratio 0.5, A -1: min(-0.5, -0.8) = -0.8
    # ratio 1.5, A -1: min(-1.5, -1.2) = -1.5
    # ratio 0.5, A  1: min( 0.5,  0.8) =  0.5
    # ratio 1.1, A  2: min( 2.2,  2.2) =  2.2
    # sum 1.6, mean 0.32, loss -0.32; 4 of 5 ratios are outside [0.8, 1.2] -> clipfrac 0.8.
    loss, clipfrac = losses.clip_policy_loss(
        _log(1.5, 0.5, 1.5, 0.5, 1.1),
        np.zeros(5, np.float32),
        np.array([1.0, -1.0, -1.0, 1.0, 2.0], np.float32),
        0.2,
    )
    assert_float32_close(loss, -0.32)
    np.testing.assert_allclose(clipfrac, 0.8)


def test_dual_clip_policy_loss_matches_naive_reference():
    b = _random_batch(seed=2)
    b["log_prob"] = b["old_log_prob"] + np.linspace(-2.0, 2.0, 32, dtype=np.float32)
    loss, clipfrac = losses.dual_clip_policy_loss(**b, clip_ratio=0.2, dual_clip=3.0)
    expected_loss, expected_clipfrac = _naive_clip_loss(**b, clip_ratio=0.2, dual_clip=3.0)
    assert_float32_close(loss, expected_loss)
    np.testing.assert_allclose(clipfrac, expected_clipfrac)


def test_dual_clip_equals_clip_loss_for_positive_advantages():
    b = _random_batch(seed=3)
    b["advantage"] = np.abs(b["advantage"])
    b["log_prob"] = b["old_log_prob"] + np.linspace(-3.0, 3.0, 32, dtype=np.float32)
    dual = losses.dual_clip_policy_loss(**b, clip_ratio=0.2, dual_clip=3.0)
    plain = losses.clip_policy_loss(**b, clip_ratio=0.2)
    np.testing.assert_array_equal(dual, plain)


def test_dual_clip_bounds_negative_advantages_with_huge_ratio():
    # eps 0.2, dual clip 3, A = [-1, -1]:
    # ratio 10:  clipped min(-10, -1.2) = -10, dual max(-10, -3) = -3
    # ratio 0.5: clipped min(-0.5, -0.8) = -0.8, dual max(-0.8, -3) = -0.8
    # clip loss -mean(-10, -0.8) = 5.4; dual-clip loss -mean(-3, -0.8) = 1.9.
    args = (_log(10.0, 0.5), np.zeros(2, np.float32), np.array([-1.0, -1.0], np.float32), 0.2)
    plain_loss, _ = losses.clip_policy_loss(*args)
    dual_loss, clipfrac = losses.dual_clip_policy_loss(*args, dual_clip=3.0)
    assert_float32_close(plain_loss, 5.4)
    assert_float32_close(dual_loss, 1.9)
    np.testing.assert_allclose(clipfrac, 1.0)


@pytest.mark.parametrize("dual_clip", [1.0, 0.5, 1])
def test_dual_clip_rejects_values_not_above_one(dual_clip):
    b = _random_batch(seed=4)
    with pytest.raises(ValueError, match=f"dual_clip must be greater than 1, got {dual_clip}"):
        losses.dual_clip_policy_loss(**b, clip_ratio=0.2, dual_clip=dual_clip)


@pytest.mark.parametrize("kl, factor", [(0.1, None), (0.1, 2.0), (0.015, 2.0)])
def test_kl_penalty_policy_loss_matches_naive_reference(kl, factor):
    b = _random_batch(seed=5)
    params = dict(kl=kl, beta=0.5, kl_target=0.01, kl_cutoff_factor=factor, kl_cutoff_coef=1000.0)
    loss = losses.kl_penalty_policy_loss(**b, **params)
    expected = _naive_kl_penalty_loss(*b.values(), *params.values())
    assert_float32_close(loss, expected)


def test_kl_penalty_policy_loss_hand_computed():
    # ratios [2, 0.5], A [1, 2]: -mean(2, 1) = -1.5; beta 0.5 * kl 0.1 = 0.05 -> -1.45.
    # Cutoff factor 2 with target 0.01: threshold 0.02, 1000 * (0.1 - 0.02)^2 = 6.4 -> 4.95.
    # Cutoff factor 20: threshold 0.2 > kl, no extra term -> -1.45.
    args = (_log(2.0, 0.5), np.zeros(2, np.float32), np.array([1.0, 2.0], np.float32))
    params = dict(kl=tf.constant(0.1), beta=0.5, kl_target=0.01)
    assert_float32_close(losses.kl_penalty_policy_loss(*args, **params), -1.45)
    cut = losses.kl_penalty_policy_loss(*args, **params, kl_cutoff_factor=2.0)
    assert_float32_close(cut, 4.95)
    not_cut = losses.kl_penalty_policy_loss(*args, **params, kl_cutoff_factor=20.0)
    assert_float32_close(not_cut, -1.45)


@pytest.mark.parametrize(
    "kl, expected",
    [
        (0.02, 1.5),  # above 1.3 * 0.01: increase
        (0.005, 1.0 / 1.5),  # below 0.7 * 0.01: decrease
        (0.01, 1.0),  # within [0.007, 0.013]: keep
        (0.0125, 1.0),
        (0.0075, 1.0),
    ],
)
def test_adapt_kl_beta_branches(kl, expected):
    beta = losses.adapt_kl_beta(tf.constant(1.0), tf.constant(kl), 0.01)
    assert_float32_close(beta, expected)


def test_adapt_kl_beta_accepts_python_floats():
    np.testing.assert_allclose(losses.adapt_kl_beta(2.0, 1.0, 0.01), 3.0)


@pytest.mark.parametrize("clip_range", [None, 0.2])
def test_value_loss_matches_naive_reference(clip_range):
    rng = np.random.default_rng(6)
    value, old_value, returns = rng.normal(size=(3, 32)).astype(np.float32)
    loss = losses.value_loss(value, old_value, returns, clip_range)
    expected = _naive_value_loss(value, old_value, returns, clip_range)
    assert_float32_close(loss, expected)


def test_value_loss_hand_computed():
    # v [1, 3], R [2, 2]: errors [1, 1] -> 0.5 * 1 = 0.5.
    # Clipped with old_v [0, 2.9], c 0.5:
    #   sample 0: clipped v = 0 + clip(1, -.5, .5) = 0.5, (0.5 - 2)^2 = 2.25 > 1 -> 2.25
    #   sample 1: clipped v = 2.9 + clip(0.1) = 3.0, (3 - 2)^2 = 1 -> 1
    #   0.5 * mean(2.25, 1) = 0.8125.
    value = np.array([1.0, 3.0], np.float32)
    old_value = np.array([0.0, 2.9], np.float32)
    returns = np.array([2.0, 2.0], np.float32)
    np.testing.assert_allclose(losses.value_loss(value, old_value, returns), 0.5)
    assert_float32_close(losses.value_loss(value, old_value, returns, 0.5), 0.8125)


def test_value_clipping_is_inactive_within_clip_range():
    value = np.array([1.0, 2.0], np.float32)
    old_value = np.array([0.9, 2.1], np.float32)
    returns = np.array([0.0, 5.0], np.float32)
    np.testing.assert_allclose(
        losses.value_loss(value, old_value, returns, 0.5), losses.value_loss(value, None, returns)
    )


def test_losses_work_in_tf_function_with_unknown_size():
    vector = tf.TensorSpec([None], tf.float32)
    scalar = tf.TensorSpec([], tf.float32)

    @tf.function(input_signature=[vector] * 3 + [scalar] * 3)
    def all_losses(log_prob, old_log_prob, advantage, beta, kl_target, clip):
        kl = losses.approx_kl(old_log_prob, log_prob)
        return dict(
            kl=kl,
            clip=losses.clip_policy_loss(log_prob, old_log_prob, advantage, clip)[0],
            dual=losses.dual_clip_policy_loss(log_prob, old_log_prob, advantage, clip, 3.0)[0],
            penalty=losses.kl_penalty_policy_loss(
                log_prob, old_log_prob, advantage, kl, beta, kl_target, 2.0
            ),
            beta=losses.adapt_kl_beta(beta, kl, kl_target),
            value=losses.value_loss(log_prob, old_log_prob, advantage, clip),
        )

    for size in (5, 17):
        b = _random_batch(seed=size, size=size)
        result = all_losses(*b.values(), 1.0, 0.01, 0.2)
        kl = _naive_approx_kl(b["old_log_prob"], b["log_prob"])
        assert_float32_close(result["kl"], kl)
        assert_float32_close(result["clip"], _naive_clip_loss(*b.values(), 0.2)[0])
        np.testing.assert_allclose(
            result["dual"], _naive_clip_loss(*b.values(), 0.2, 3.0)[0], rtol=1e-5
        )
        expected = _naive_kl_penalty_loss(*b.values(), kl, 1.0, 0.01, 2.0, 1000.0)
        np.testing.assert_allclose(result["penalty"], expected, rtol=1e-4)
        expected = _naive_value_loss(*b.values(), 0.2)
        assert_float32_close(result["value"], expected)
    assert all_losses.experimental_get_tracing_count() == 1
