"""Pure TensorFlow PPO losses: clipped, dual-clip and KL-penalty surrogates, value losses, KL."""

from __future__ import annotations

import tensorflow as tf

TensorLike = tf.types.experimental.TensorLike


def _log_prob_and_ratio(
    log_prob: TensorLike, old_log_prob: TensorLike
) -> tuple[tf.Tensor, tf.Tensor]:
    """Returns log(pi_new / pi_old) and pi_new / pi_old, in the dtype of `log_prob`."""
    log_prob = tf.convert_to_tensor(log_prob)
    log_ratio = log_prob - tf.cast(old_log_prob, log_prob.dtype)
    return log_ratio, tf.exp(log_ratio)


def _clipped_objective(ratio: tf.Tensor, advantage: tf.Tensor, clip_ratio: tf.Tensor) -> tf.Tensor:
    """Per-sample PPO objective min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A)."""
    clipped_ratio = tf.clip_by_value(ratio, 1.0 - clip_ratio, 1.0 + clip_ratio)
    return tf.minimum(ratio * advantage, clipped_ratio * advantage)


def _clip_fraction(ratio: tf.Tensor, clip_ratio: tf.Tensor) -> tf.Tensor:
    """Fraction of samples whose ratio lies outside [1 - eps, 1 + eps]."""
    return tf.reduce_mean(tf.cast(tf.abs(ratio - 1.0) > clip_ratio, ratio.dtype))


def approx_kl(old_log_prob: TensorLike, new_log_prob: TensorLike) -> tf.Tensor:
    """The k3 estimator of KL(pi_old || pi_new) from samples of the old policy.

    mean((ratio - 1) - log(ratio)) with ratio = pi_new / pi_old (J. Schulman, "Approximating KL
    Divergence", 2020): unbiased, low variance, and non-negative per sample, since
    log(x) <= x - 1.

    Args:
        old_log_prob: Float tensor, log-probabilities of the taken actions under the old policy.
        new_log_prob: Float tensor shaped like `old_log_prob`, under the new policy.

    Returns:
        Scalar float tensor, in the dtype of `new_log_prob`.
    """
    log_ratio, ratio = _log_prob_and_ratio(new_log_prob, old_log_prob)
    return tf.reduce_mean((ratio - 1.0) - log_ratio)


def clip_policy_loss(
    log_prob: TensorLike,
    old_log_prob: TensorLike,
    advantage: TensorLike,
    clip_ratio: TensorLike,
) -> tuple[tf.Tensor, tf.Tensor]:
    """The clipped surrogate policy loss of PPO (Schulman et al. 2017).

        loss = -mean(min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A))

    Args:
        log_prob: Float tensor, log-probabilities of the taken actions under the current policy.
        old_log_prob: Float tensor shaped like `log_prob`, under the policy that collected them.
        advantage: Float tensor shaped like `log_prob`.
        clip_ratio: Python float or scalar tensor eps > 0.

    Returns:
        (loss, clipfrac): scalar tensors; clipfrac = mean(|ratio - 1| > eps).
    """
    _, ratio = _log_prob_and_ratio(log_prob, old_log_prob)
    advantage = tf.cast(advantage, ratio.dtype)
    clip_ratio = tf.cast(clip_ratio, ratio.dtype)
    objective = _clipped_objective(ratio, advantage, clip_ratio)
    return -tf.reduce_mean(objective), _clip_fraction(ratio, clip_ratio)


def dual_clip_policy_loss(
    log_prob: TensorLike,
    old_log_prob: TensorLike,
    advantage: TensorLike,
    clip_ratio: TensorLike,
    dual_clip: TensorLike,
) -> tuple[tf.Tensor, tf.Tensor]:
    """Dual-clip PPO policy loss (Ye et al. 2020, "Mastering Complex Control in MOBA Games").

    For A >= 0 the per-sample objective is the clipped one of `clip_policy_loss`; for A < 0 it is
    additionally bounded below, max(min(ratio * A, clip(ratio) * A), dual_clip * A), so that a
    huge ratio on a bad action cannot produce an unbounded update.

    Args:
        log_prob: Float tensor, log-probabilities of the taken actions under the current policy.
        old_log_prob: Float tensor shaped like `log_prob`, under the policy that collected them.
        advantage: Float tensor shaped like `log_prob`.
        clip_ratio: Python float or scalar tensor eps > 0.
        dual_clip: Python float or scalar tensor c > 1, e.g. 3.0.

    Returns:
        (loss, clipfrac): scalar tensors; clipfrac = mean(|ratio - 1| > eps), as for
        `clip_policy_loss`.

    Raises:
        ValueError: If `dual_clip` is a Python number <= 1 (tensors are not checked).
    """
    if isinstance(dual_clip, (int, float)) and dual_clip <= 1:
        raise ValueError(f"dual_clip must be greater than 1, got {dual_clip}.")
    _, ratio = _log_prob_and_ratio(log_prob, old_log_prob)
    advantage = tf.cast(advantage, ratio.dtype)
    clip_ratio = tf.cast(clip_ratio, ratio.dtype)
    objective = _clipped_objective(ratio, advantage, clip_ratio)
    dual_clipped = tf.maximum(objective, tf.cast(dual_clip, ratio.dtype) * advantage)
    objective = tf.where(advantage < 0, dual_clipped, objective)
    return -tf.reduce_mean(objective), _clip_fraction(ratio, clip_ratio)


def kl_penalty_policy_loss(
    log_prob: TensorLike,
    old_log_prob: TensorLike,
    advantage: TensorLike,
    kl: TensorLike,
    beta: TensorLike,
    kl_target: TensorLike,
    kl_cutoff_factor: TensorLike | None = None,
    kl_cutoff_coef: TensorLike = 1000.0,
) -> tf.Tensor:
    """The adaptive-KL-penalty surrogate loss of PPO, as in the original TensorFlow Agents PPO.

        loss = -mean(ratio * A) + beta * kl
               [+ kl_cutoff_coef * relu(kl - kl_cutoff_factor * kl_target)^2]

    Args:
        log_prob: Float tensor, log-probabilities of the taken actions under the current policy.
        old_log_prob: Float tensor shaped like `log_prob`, under the policy that collected them.
        advantage: Float tensor shaped like `log_prob`.
        kl: Scalar float tensor, the mean KL divergence between the old and the new policy.
        beta: Python float or scalar tensor, the penalty coefficient (see `adapt_kl_beta`).
        kl_target: Python float or scalar tensor, the desired KL per update.
        kl_cutoff_factor: If not None, KL beyond kl_cutoff_factor * kl_target is additionally
            penalized quadratically.
        kl_cutoff_coef: The coefficient of that quadratic penalty.

    Returns:
        Scalar float tensor, in the dtype of `log_prob`.
    """
    _, ratio = _log_prob_and_ratio(log_prob, old_log_prob)
    dtype = ratio.dtype
    kl = tf.cast(kl, dtype)
    loss = -tf.reduce_mean(ratio * tf.cast(advantage, dtype)) + tf.cast(beta, dtype) * kl
    if kl_cutoff_factor is not None:
        threshold = tf.cast(kl_cutoff_factor, dtype) * tf.cast(kl_target, dtype)
        loss += tf.cast(kl_cutoff_coef, dtype) * tf.square(tf.nn.relu(kl - threshold))
    return loss


def adapt_kl_beta(beta: TensorLike, kl: TensorLike, kl_target: TensorLike) -> tf.Tensor:
    """The next KL penalty coefficient, from the KL the last update reached.

    beta * 1.5 if kl > 1.3 * kl_target; beta / 1.5 if kl < 0.7 * kl_target; else beta.

    Args:
        beta: Python float or scalar float tensor, the current coefficient.
        kl: Scalar float tensor, the mean KL of the last update.
        kl_target: Python float or scalar tensor, the desired KL per update.

    Returns:
        Scalar float tensor, in the dtype of `beta`.
    """
    beta = tf.convert_to_tensor(beta)
    kl = tf.cast(kl, beta.dtype)
    kl_target = tf.cast(kl_target, beta.dtype)
    decreased = tf.where(kl < 0.7 * kl_target, beta / 1.5, beta)
    return tf.where(kl > 1.3 * kl_target, beta * 1.5, decreased)


def value_loss(
    value: TensorLike,
    old_value: TensorLike,
    returns: TensorLike,
    clip_range: TensorLike | None = None,
) -> tf.Tensor:
    """Squared-error value loss, optionally clipped around the old value estimates.

    Without `clip_range`: 0.5 * mean((v - R)^2). With it (c):
    0.5 * mean(max((v - R)^2, (old_v + clip(v - old_v, -c, c) - R)^2)).

    Args:
        value: Float tensor, the current value predictions.
        old_value: Float tensor shaped like `value`, the predictions at collection time; only
            read when `clip_range` is given.
        returns: Float tensor shaped like `value`, the regression targets.
        clip_range: None, or a Python float or scalar tensor c > 0.

    Returns:
        Scalar float tensor, in the dtype of `value`.
    """
    value = tf.convert_to_tensor(value)
    returns = tf.cast(returns, value.dtype)
    squared_error = tf.square(value - returns)
    if clip_range is not None:
        old_value = tf.cast(old_value, value.dtype)
        clip_range = tf.cast(clip_range, value.dtype)
        clipped_value = old_value + tf.clip_by_value(value - old_value, -clip_range, clip_range)
        squared_error = tf.maximum(squared_error, tf.square(clipped_value - returns))
    return 0.5 * tf.reduce_mean(squared_error)
