"""Pure TensorFlow math for returns and advantages over time-major [T, B] rollouts."""

from __future__ import annotations

import tensorflow as tf

TensorLike = tf.types.experimental.TensorLike


def _reverse_recursion(base: tf.Tensor, factor: tf.Tensor) -> tf.Tensor:
    """Solves x_t = base_t + factor_t * x_{t+1} backwards in time, with x_T = 0.

    Args:
        base: Float tensor [T, ...].
        factor: Float tensor [T, ...], same shape as `base`.

    Returns:
        Float tensor [T, ...] holding x_0 .. x_{T-1}.
    """
    # Built from the dynamic shape so that T may be unknown inside tf.function.
    initial = tf.zeros(tf.shape(base)[1:], base.dtype)
    return tf.scan(
        lambda following, step: step[0] + step[1] * following,
        (base, factor),
        initializer=initial,
        reverse=True,
    )


def _in_dtype_of_reward(reward: TensorLike, *others: TensorLike) -> tuple[tf.Tensor, ...]:
    """`reward` as a tensor, then each of `others` cast to its dtype (bool flags become 0/1)."""
    reward = tf.convert_to_tensor(reward)
    return (reward, *(tf.cast(other, reward.dtype) for other in others))


def discounted_return(
    reward: TensorLike,
    next_value: TensorLike,
    terminated: TensorLike,
    done: TensorLike,
    discount: TensorLike,
) -> tf.Tensor:
    """Discounted returns that restart at episode ends and bootstrap where needed.

    For t = T-1 down to 0:

        R_t = r_t + discount * (1 - terminated_t) * next_value_t   if done_t or t == T-1
        R_t = r_t + discount * R_{t+1}                              otherwise

    An episode that ended at t by truncation (time limit) is bootstrapped from the value of its
    true final observation, one that ended by termination is not bootstrapped, and the last step
    of the rollout, when not done, is bootstrapped from `next_value_{T-1}`.

    Args:
        reward: Float tensor [T, B].
        next_value: Float tensor [T, B], the value of the true next observation s_{t+1} (see
            `next_values`).
        terminated: Bool or float tensor [T, B]; 1 where the episode reached a terminal state.
        done: Bool or float tensor [T, B]; 1 where the episode ended (terminated or truncated).
        discount: Python float or scalar tensor.

    Returns:
        Float tensor [T, B] of returns, in the dtype of `reward`.
    """
    reward, next_value, terminated, done, discount = _in_dtype_of_reward(
        reward, next_value, terminated, done, discount
    )
    # The last step of the rollout bootstraps like an episode end (but is not terminal).
    ends = tf.concat([done[:-1], tf.ones_like(done[-1:])], axis=0)
    base = reward + discount * ends * (1.0 - terminated) * next_value
    return _reverse_recursion(base, discount * (1.0 - ends))


def lambda_advantage(
    reward: TensorLike,
    value: TensorLike,
    next_value: TensorLike,
    terminated: TensorLike,
    done: TensorLike,
    discount: TensorLike,
    lambda_: TensorLike,
) -> tf.Tensor:
    """Generalized advantage estimation (Schulman et al. 2016) over a time-major rollout.

        delta_t = r_t + discount * (1 - terminated_t) * next_value_t - value_t
        A_t = delta_t + discount * lambda_ * (1 - done_t) * A_{t+1},   A_T = 0

    Args:
        reward: Float tensor [T, B].
        value: Float tensor [T, B], the value of the observation s_t the action was taken in.
        next_value: Float tensor [T, B], the value of the true next observation s_{t+1}: for a
            truncated step the value of the true final observation, for the last step of the
            rollout the bootstrap value (see `next_values`).
        terminated: Bool or float tensor [T, B]; 1 where the episode reached a terminal state.
        done: Bool or float tensor [T, B]; 1 where the episode ended (terminated or truncated).
        discount: Python float or scalar tensor.
        lambda_: Python float or scalar tensor in [0, 1]; 0 gives the one-step TD error, 1 the
            Monte Carlo return minus `value`.

    Returns:
        Float tensor [T, B] of advantages, in the dtype of `reward`.
    """
    reward, value, next_value, terminated, done, discount, lambda_ = _in_dtype_of_reward(
        reward, value, next_value, terminated, done, discount, lambda_
    )
    delta = reward + discount * (1.0 - terminated) * next_value - value
    return _reverse_recursion(delta, discount * lambda_ * (1.0 - done))


def next_values(
    value: TensorLike,
    bootstrap_value: TensorLike,
    final_value: TensorLike,
    truncated: TensorLike,
) -> tf.Tensor:
    """The value of each step's true next observation, for `lambda_advantage`.

    next_value_t is value_{t+1} (value_T = bootstrap_value), except where the step was truncated:
    there the next stored observation belongs to a new episode, so the value of the true final
    observation, final_value_t, is used. Where a step terminated the entry is value_{t+1} too;
    it is irrelevant because termination zeroes the bootstrap.

    Args:
        value: Float tensor [T, B], the value of each step's observation.
        bootstrap_value: Float tensor [B], the value of the observation after the rollout.
        final_value: Float tensor [T, B], the value of the true final observation; only read where
            `truncated`.
        truncated: Bool or float tensor [T, B]; nonzero where the episode was cut off by a limit.

    Returns:
        Float tensor [T, B], in the dtype of `value`.
    """
    value = tf.convert_to_tensor(value)
    bootstrap_value = tf.cast(bootstrap_value, value.dtype)
    final_value = tf.cast(final_value, value.dtype)
    shifted = tf.concat([value[1:], bootstrap_value[None]], axis=0)
    return tf.where(tf.cast(truncated, tf.bool), final_value, shifted)


def normalize_advantages(adv: TensorLike, epsilon: float = 1e-8) -> tf.Tensor:
    """Shifts and scales advantages to zero mean and unit standard deviation.

    The mean and the (population) standard deviation are taken over all elements.

    Args:
        adv: Float tensor of any shape.
        epsilon: Added to the standard deviation to avoid division by zero.

    Returns:
        Float tensor shaped like `adv`: (adv - mean) / (std + epsilon).
    """
    adv = tf.convert_to_tensor(adv)
    mean = tf.reduce_mean(adv)
    std = tf.math.reduce_std(adv)
    return (adv - mean) / (std + tf.cast(epsilon, adv.dtype))


def explained_variance(prediction: TensorLike, target: TensorLike) -> tf.Tensor:
    """Fraction of the target's variance explained by the prediction.

    1 - Var[target - prediction] / Var[target], over all elements: 1 for a perfect prediction,
    0 for predicting the mean, negative when worse than that. Where Var[target] == 0 the ratio is
    undefined; this returns 0 ("nothing explained") rather than nan so that logs stay finite.

    Args:
        prediction: Float tensor.
        target: Float tensor shaped like `prediction`.

    Returns:
        Scalar float tensor.
    """
    target = tf.convert_to_tensor(target)
    prediction = tf.cast(prediction, target.dtype)
    target_variance = tf.math.reduce_variance(target)
    residual_variance = tf.math.reduce_variance(target - prediction)
    has_variance = target_variance > 0
    safe_variance = tf.where(has_variance, target_variance, tf.ones_like(target_variance))
    explained = 1.0 - residual_variance / safe_variance
    return tf.where(has_variance, explained, tf.zeros_like(explained))
