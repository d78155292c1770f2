"""Tests for the PPO settings checks."""

import pytest

from agents.ppo.validate import validate_config
from agents.scripts import configs


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("chunk_length", 0, "chunk_length must be a positive integer, got 0"),
        ("rollout_length", 2.5, "rollout_length must be a positive integer, got 2.5"),
        ("learning_rate", -1.0, "learning_rate must be > 0, got -1.0"),
        ("discount", 1.5, r"discount must be in \[0, 1\], got 1.5"),
        ("entropy_coef", -0.1, "entropy_coef must be >= 0"),
        ("policy_loss", "bogus", "Unknown policy_loss 'bogus'; accepted: clip, dual_clip"),
        ("learning_rate_schedule", "cosine", "accepted: constant, linear"),
        ("num_minibatches", 1000, "num_minibatches 1000 exceeds the 32 sequences"),
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
    with pytest.raises(ValueError, match="dual_clip must be > 1"):
        validate_config(config)
    config = configs.debug()
    config.update(chunk_length=5)
    with pytest.raises(ValueError, match="multiple of chunk_length 5"):
        validate_config(config)


@pytest.mark.parametrize("name", sorted(configs.CONFIGS))
def test_every_shipped_config_is_valid(name):
    validate_config(configs.CONFIGS[name]())
