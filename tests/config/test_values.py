"""Tests for typed `--set` overrides of keys whose default is None."""

import re

import pytest

from agents.config import values
from agents.config.errors import UsageError
from agents.scripts import configs


@pytest.mark.parametrize(
    "override, key, expected",
    [
        ("target_kl=0.02", "target_kl", 0.02),
        ("value_clip=1", "value_clip", 1.0),  # An int where a float is declared: widened.
        ("kl_cutoff_factor=2.0", "kl_cutoff_factor", 2.0),
        ("max_grad_norm=None", "max_grad_norm", None),
        ("max_episode_steps=200", "max_episode_steps", 200),
        ("env_wrapper=atari", "env_wrapper", "atari"),
    ],
)
def test_optional_keys_accept_their_type_and_none(override, key, expected):
    config = values.apply_overrides(configs.debug(), [override])
    assert config[key] == expected and type(config[key]) is type(expected)
    assert values.apply_overrides(config, [f"{key}=None"])[key] is None


@pytest.mark.parametrize(
    "override, message",
    [
        (
            "target_kl=abc",
            "Bad value in --set target_kl=abc: target_kl must be a float > 0.0 or None, got 'abc'.",
        ),
        ("value_clip=abc", "value_clip must be a float > 0.0 or None, got 'abc'."),
        ("kl_cutoff_factor=[2]", "kl_cutoff_factor must be a float > 1.0 or None, got [2]."),
        ("max_grad_norm=True", "max_grad_norm must be a float > 0.0 or None, got True."),
        ("max_episode_steps=2.5", "max_episode_steps must be an int >= 1 or None, got 2.5."),
        (
            "env_wrapper=1",
            "env_wrapper must be one of minigrid_pixels, minigrid_image, minigrid_dict, atari, "
            "info_action_mask or None, got 1.",
        ),
        ("learning_rate=None", "learning_rate must be a float > 0, got None."),
        ("learning_rate=-1", "learning_rate must be a float > 0, got -1.0."),
        (
            "learning_rat=1",
            "Bad override 'learning_rat=1': expected key=value with a config key "
            "(did you mean learning_rate?)",
        ),
        ("world_size=2", "Bad override 'world_size=2'"),  # The number of ranks is no config value.
    ],
)
def test_wrong_type_is_a_usage_error_naming_key_value_and_type(override, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        values.apply_overrides(configs.debug(), [override])


def test_optional_keys_are_typed_when_resuming_a_saved_config():
    saved = dict(configs.debug(), target_kl=0.01)  # As read back from config.yaml.
    with pytest.raises(UsageError, match="target_kl must be a float > 0.0 or None, got 'abc'"):
        values.apply_overrides(saved, ["target_kl=abc"])
