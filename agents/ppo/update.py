"""The PPO update: targets from a rollout, sequence minibatches, and the per-minibatch loss."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from agents.ppo import advantages, losses
from agents.ppo.validate import POLICY_LOSSES


def rollout_targets(data: dict, bootstrap_value: tf.Tensor, config: Any) -> dict:
    """Advantages and returns of a [T, B] rollout.

    Truncated steps bootstrap from the value of their true final observation (`final_value`),
    terminated steps from nothing, and the last step of the rollout from `bootstrap_value`.
    """
    next_value = advantages.next_values(
        data["value"], bootstrap_value, data["final_value"], data["truncated"]
    )
    done = data["terminated"] | data["truncated"]
    advantage = advantages.lambda_advantage(
        data["reward"],
        data["value"],
        next_value,
        data["terminated"],
        done,
        config.discount,
        config.gae_lambda,
    )
    return {"advantage": advantage, "return": advantage + data["value"]}


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


def minibatch_loss(network, batch: dict, kl_beta: tf.Tensor, config: Any):
    """Total loss and diagnostics of one minibatch of sequences.

    Returns:
        Tuple (loss, metrics) with scalar tensors.
    """
    output = network(batch["observ"], batch["reset"], batch["state"])
    log_prob = output.policy.log_prob(batch["action"])
    policy_loss, clipfrac, kl = policy_objective(log_prob, batch, kl_beta, config)
    value_loss = losses.value_loss(output.value, batch["value"], batch["return"], config.value_clip)
    entropy = tf.reduce_mean(output.policy.entropy())
    loss = policy_loss + config.value_coef * value_loss - config.entropy_coef * entropy
    metrics = {
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "entropy": entropy,
        "approx_kl": kl,
        "clipfrac": clipfrac,
    }
    return loss, metrics
