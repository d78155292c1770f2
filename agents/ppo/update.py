"""The PPO update loop: epochs of minibatch steps, averaged over MPI ranks when several run."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2


def run_epochs(
    sequences: dict[str, tf.Tensor],
    epoch_keys: tf.Tensor,
    gradient_step: Callable[[dict], dict],
    minibatches: int,
    epochs: int,
    target_kl: float | None,
    metric_keys: Sequence[str],
    cross_replica_sum=None,
) -> dict[str, tf.Tensor]:
    """`epochs` passes of shuffled minibatches over `sequences`; the last epoch's mean metrics.

    Written as `tf.while_loop`s (no AutoGraph); minibatches are rows of a reshaped permutation,
    so every shape is static, which XLA needs to compile the loop well.

    Args:
        sequences: Fields [count, chunk, ...] of the rollout's sequences.
        epoch_keys: [epochs, count] random keys; epoch e visits the sequences in the order that
            sorts `epoch_keys[e]` (a remainder of count // minibatches is left out).
        gradient_step: Takes a minibatch, applies one step, returns its metrics.
        minibatches: Minibatches per epoch.
        epochs: The most epochs.
        target_kl: Stop after an epoch whose mean approx_kl exceeds 1.5 x target_kl (None: never).
        metric_keys: The keys of `gradient_step`'s metrics to average.
        cross_replica_sum: Under MPI, the epoch means are averaged over ranks (they must agree
            on the early stop, or they hang).

    Returns:
        Mean metrics of the last epoch, and `epochs`, how many ran (float32).
    """
    count = sequences["reward"].shape[0]
    size = count // minibatches
    zeros = {key: tf.constant(0.0) for key in metric_keys}

    def epoch(done, _, stop):
        del stop
        order = tf.reshape(tf.argsort(epoch_keys[done])[: minibatches * size], [minibatches, size])

        def step(index, totals):
            batch = {key: tf.gather(value, order[index]) for key, value in sequences.items()}
            metrics = gradient_step(batch)
            return index + 1, {key: totals[key] + metrics[key] for key in totals}

        _, totals = tf.while_loop(lambda index, _: index < minibatches, step, (0, zeros))
        means = {key: value / minibatches for key, value in totals.items()}
        if cross_replica_sum is not None:
            keys = sorted(means)
            averaged = average_over_ranks([means[key] for key in keys], cross_replica_sum)
            means = dict(zip(keys, averaged))
        stop = tf.constant(False)
        if target_kl:
            stop = means["approx_kl"] > 1.5 * target_kl
        return done + 1, means, stop

    done, metrics, _ = tf.while_loop(
        lambda done, _, stop: (done < epochs) & tf.logical_not(stop),
        epoch,
        (tf.constant(0), zeros, tf.constant(False)),
    )
    metrics["epochs"] = tf.cast(done, tf.float32)
    return metrics


def average_over_ranks(gradients: list, cross_replica_sum) -> list:
    """Mean of each gradient over MPI ranks, with one collective for all of them."""
    flat = tf.concat([tf.reshape(g, [-1]) for g in gradients], 0)
    count = cross_replica_sum(tf.ones([1], tf.float64))[0]
    flat = tf.cast(cross_replica_sum(tf.cast(flat, tf.float64)) / count, tf.float32)
    sizes = [int(np.prod(g.shape)) for g in gradients]
    return [tf.reshape(part, g.shape) for part, g in zip(tf.split(flat, sizes), gradients)]


def rare_branch(pred: tf.Tensor, true_fn) -> None:
    """`tf.cond(pred, true_fn, tf.no_op)` for a branch that is rarely taken, such as the update.

    In a `tf.function`, TF lowers a cond into Switch/Merge nodes that the executor visits on
    every call, taken or not: for the update inside the rollout loop that cost about 0.1 ms per
    simulation step (15% of it). Unlowered, the If op calls the branch only when it is taken.
    """
    result = tf.cond(pred, true_fn, tf.no_op)
    if_op = result.op.inputs[0].op if isinstance(result, tf.Tensor) else None
    if if_op is not None and if_op.type == "If":  # Else an eager call or a changed TF: as is.
        if_op._set_attr("_lower_using_switch_merge", attr_value_pb2.AttrValue(b=False))


def no_value(_) -> tf.Operation:
    """A no-op, for `tf.cond` branches that call a function returning nothing."""
    return tf.no_op()
