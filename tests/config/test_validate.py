"""Tests for the PPO settings checks."""

import pytest

from agents.config.validate import validate_config
from agents.scripts import configs


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("chunk_length", 0, "chunk_length must be an int >= 1, got 0"),
        ("rollout_length", 2.5, "rollout_length must be an int >= 1, got 2.5"),
        ("learning_rate", -1.0, "learning_rate must be a float > 0, got -1.0"),
        ("discount", 1.5, r"discount must be a float in \[0.0, 1.0\], got 1.5"),
        ("entropy_coef", -0.1, "entropy_coef must be a float >= 0.0"),
        ("policy_loss", "bogus", "policy_loss must be one of clip, dual_clip, kl_penalty, got"),
        ("learning_rate_schedule", "cosine", "must be one of constant, linear, got 'cosine'"),
        ("num_minibatches", 1000, "num_minibatches 1000 exceeds the 32 sequences"),
        ("target_kl", 0.0, "target_kl must be a float > 0.0 or None, got 0.0"),
        ("target_kl", "abc", "target_kl must be a float > 0.0 or None, got 'abc'"),
        ("value_clip", -0.2, "value_clip must be a float > 0.0 or None, got -0.2"),
        ("kl_cutoff_factor", 1.0, "kl_cutoff_factor must be a float > 1.0 or None, got 1.0"),
        ("max_grad_norm", 0, "max_grad_norm must be a float > 0.0 or None, got 0"),
        ("max_grad_norm", True, "max_grad_norm must be a float > 0.0 or None, got True"),
        ("policy_layers", [8, 0], r"policy_layers must be a list of ints each >= 1, got \[8, 0\]"),
        ("learning_rate", float("inf"), "learning_rate must be a float > 0, got inf"),
        ("discount", float("nan"), r"discount must be a float in \[0.0, 1.0\], got nan"),
        ("stop_at_score", float("-inf"), "stop_at_score must be a float or None, got -inf"),
        (
            "env_wrapper",
            "vizdoom",
            "env_wrapper must be one of minigrid_pixels, minigrid_image, minigrid_dict, atari, "
            "info_action_mask or None",
        ),
    ],
)
def test_rejects_invalid_values_naming_them(key, value, message):
    config = configs.debug()
    config[key] = value
    with pytest.raises(ValueError, match=message):
        validate_config(config)


def test_rejects_dual_clip_not_above_one_and_misaligned_chunks():
    config = configs.debug()
    config.update(policy_loss="dual_clip", dual_clip=1.0)
    with pytest.raises(ValueError, match="dual_clip must be a float > 1.0, got 1.0"):
        validate_config(config)
    config = configs.debug()
    config.update(chunk_length=5)
    with pytest.raises(ValueError, match="multiple of chunk_length 5"):
        validate_config(config)


@pytest.mark.parametrize(
    "key, value", [("target_kl", 0.02), ("value_clip", 0.2), ("kl_cutoff_factor", 2.0)]
)
def test_accepts_none_and_values_in_range_for_optional_settings(key, value):
    validate_config(dict(configs.debug(), **{key: None}))
    validate_config(dict(configs.debug(), **{key: value}))
    validate_config(dict(configs.debug(), max_grad_norm=None))


@pytest.mark.parametrize("name", sorted(configs.CONFIGS))
def test_every_shipped_config_is_valid(name):
    validate_config(configs.CONFIGS[name]())


def test_visit_key_agent_needs_a_native_env_and_a_bonus_that_counts_visits():
    config = dict(configs.obstructedmaze_count(), visit_key="agent", native_env=False)
    with pytest.raises(ValueError, match="visit_key='agent' counts the agent of a native env"):
        validate_config(config)
    validate_config(dict(config, native_env=True))
    validate_config(dict(config, native_env=True, bonus="noveld"))
    with pytest.raises(ValueError, match="bonus='e3b' counts none: leave visit_key unset"):
        validate_config(dict(config, native_env=True, bonus="e3b"))
