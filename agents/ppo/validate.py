"""Checks of PPO settings, so bad values fail early with a message naming them."""

from __future__ import annotations

from typing import Any

POLICY_LOSSES = ("clip", "dual_clip", "kl_penalty")
SCHEDULES = ("constant", "linear")

_POSITIVE_INTS = (
    "rollout_length",
    "chunk_length",
    "update_epochs",
    "num_minibatches",
    "train_steps",
    "world_size",
)
_POSITIVE_FLOATS = ("learning_rate", "clip_ratio", "kl_target")
_UNIT_INTERVAL = ("discount", "gae_lambda")
_NON_NEGATIVE = ("value_coef", "entropy_coef")
# Settings that are None (off) or a number above a bound.
_OPTIONAL_ABOVE = (
    ("target_kl", 0),
    ("value_clip", 0),
    ("max_grad_norm", 0),
    ("kl_cutoff_factor", 1),
)


def validate_config(config: Any) -> None:
    """Raise ValueError for the first invalid PPO setting in `config`."""
    for key in _POSITIVE_INTS:
        value = config[key]
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{key} must be a positive integer, got {value!r}.")
    for key in _POSITIVE_FLOATS:
        if not config[key] > 0:
            raise ValueError(f"{key} must be > 0, got {config[key]!r}.")
    for key in _UNIT_INTERVAL:
        if not 0 <= config[key] <= 1:
            raise ValueError(f"{key} must be in [0, 1], got {config[key]!r}.")
    for key in _NON_NEGATIVE:
        if not config[key] >= 0:
            raise ValueError(f"{key} must be >= 0, got {config[key]!r}.")
    for key, bound in _OPTIONAL_ABOVE:
        value = config[key]
        if value is not None and not (_is_number(value) and value > bound):
            raise ValueError(f"{key} must be > {bound} or None, got {value!r}.")
    _choice(config, "policy_loss", POLICY_LOSSES)
    _choice(config, "learning_rate_schedule", SCHEDULES)
    if config["policy_loss"] == "dual_clip" and not config["dual_clip"] > 1:
        raise ValueError(f"dual_clip must be > 1, got {config['dual_clip']!r}.")
    if config["rollout_length"] % config["chunk_length"]:
        raise ValueError(
            f"rollout_length {config['rollout_length']} must be a multiple of chunk_length "
            f"{config['chunk_length']}."
        )
    sequences = config["rollout_length"] // config["chunk_length"] * config["num_agents"]
    if config["num_minibatches"] > sequences:
        raise ValueError(
            f"num_minibatches {config['num_minibatches']} exceeds the {sequences} sequences of a "
            "rollout (rollout_length / chunk_length x num_agents)."
        )


def _choice(config: Any, key: str, accepted: tuple[str, ...]) -> None:
    if config[key] not in accepted:
        raise ValueError(f"Unknown {key} {config[key]!r}; accepted: {', '.join(accepted)}.")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
