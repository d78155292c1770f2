"""The PPO update's minibatches: sequences of a rollout, the policy objective and the loss."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import tensorflow as tf

from agents.config.validate import POLICY_LOSSES
from agents.ppo import losses
from agents.ppo.streams import ValueStream, extrinsic


def to_sequences(data: dict, chunk_length: int) -> dict:
    """Cut [T, B, ...] fields into [B * T / chunk_length, chunk_length, ...] sequences."""

    def cut(value):
        length, batch = value.shape[0], value.shape[1]
        chunks = length // chunk_length
        value = tf.reshape(value, [chunks, chunk_length, batch] + value.shape[2:].as_list())
        perm = [0, 2, 1] + list(range(3, len(value.shape)))
        return tf.reshape(
            tf.transpose(value, perm), [chunks * batch, chunk_length] + value.shape[3:]
        )

    sequences = {key: cut(value) for key, value in data.items() if key != "state"}
    # Recurrent networks start each sequence from the state stored at its first step.
    sequences["state"] = cut(data["state"])[:, 0]
    return sequences


def policy_objective(log_prob, batch: dict, kl_beta: tf.Tensor, config: Any):
    """The configured policy loss of a minibatch; returns (loss, clipfrac, approx_kl)."""
    old_log_prob = batch["log_prob"]
    advantage = batch["advantage"]
    kl = losses.approx_kl(old_log_prob, log_prob)
    clip_ratio = config.clip_ratio
    if config.policy_loss == "clip":
        loss, clipfrac = losses.clip_policy_loss(log_prob, old_log_prob, advantage, clip_ratio)
    elif config.policy_loss == "dual_clip":
        loss, clipfrac = losses.dual_clip_policy_loss(
            log_prob, old_log_prob, advantage, clip_ratio, config.dual_clip
        )
    elif config.policy_loss == "kl_penalty":
        loss = losses.kl_penalty_policy_loss(
            log_prob,
            old_log_prob,
            advantage,
            kl,
            kl_beta,
            config.kl_target,
            config.kl_cutoff_factor,
        )
        _, clipfrac = losses.clip_policy_loss(log_prob, old_log_prob, advantage, clip_ratio)
    else:
        raise ValueError(
            f"Unknown policy_loss {config.policy_loss!r}; accepted: {', '.join(POLICY_LOSSES)}."
        )
    return loss, clipfrac, kl


def minibatch_loss(
    network,
    batch: dict,
    kl_beta: tf.Tensor,
    config: Any,
    streams: Sequence[ValueStream] | None = None,
    extra_losses: Mapping[str, tf.Tensor] | None = None,
):
    """Total loss and diagnostics of one minibatch of sequences.

    The losses are a dict, weighted in one place: `policy` (1), `value` (`value_coef`; the sum of
    every stream's value loss, each clipped by `value_clip` when set), `entropy` (`entropy_coef`,
    of the negated entropy) and any `extra_losses` (1 each, e.g. RND's predictor).

    Args:
        network: Maps (observ, reset, state) to a `NetworkOutput` (a policy, values by stream).
        batch: The minibatch: `observ`, `reset`, `state`, `action`, `log_prob`, `advantage`, and
            `value{key}` and `return{key}` per stream.
        kl_beta: The KL penalty coefficient (for `policy_loss: kl_penalty`).
        config: `policy_loss`, `clip_ratio`, `value_clip`, `value_coef`, `entropy_coef`, ...
        streams: The value streams (default: one extrinsic stream).
        extra_losses: Further named losses of the agent, added with weight 1.

    Returns:
        Tuple (loss, metrics) with scalar tensors; metrics are `<name>_loss` for the policy,
        value and extra losses, `entropy`, `approx_kl` and `clipfrac`.
    """
    streams = streams or (extrinsic(config.discount),)
    output = network(batch["observ"], batch["reset"], batch["state"])
    values = output.values
    log_prob = output.policy.log_prob(batch["action"])
    policy_loss, clipfrac, kl = policy_objective(log_prob, batch, kl_beta, config)
    value_loss = sum(
        losses.value_loss(
            values[s.key], batch["value" + s.key], batch["return" + s.key], config.value_clip
        )
        for s in streams
    )
    entropy = tf.reduce_mean(output.policy.entropy())
    terms = {"policy": policy_loss, "value": value_loss, "entropy": -entropy}
    terms.update(extra_losses or {})
    scales = {"value": config.value_coef, "entropy": config.entropy_coef}
    loss = sum(scales.get(name, 1.0) * term for name, term in terms.items())
    metrics = {f"{name}_loss": term for name, term in terms.items() if name != "entropy"}
    metrics.update(entropy=entropy, approx_kl=kl, clipfrac=clipfrac)
    return loss, metrics
