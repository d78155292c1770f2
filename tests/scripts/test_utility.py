"""Tests for typed `--set` overrides of keys whose default is None."""

import pytest

from agents.scripts import configs, utility


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
    config = utility.apply_overrides(configs.debug(), [override])
    assert config[key] == expected and type(config[key]) is type(expected)
    assert utility.apply_overrides(config, [f"{key}=None"])[key] is None


@pytest.mark.parametrize(
    "override, message",
    [
        ("target_kl=abc", "Bad value for target_kl: 'abc' is a str, expected a float or None."),
        ("value_clip=abc", "Bad value for value_clip: 'abc' is a str, expected a float or None."),
        ("kl_cutoff_factor=[2]", "kl_cutoff_factor: '[2]' is a list, expected a float or None"),
        ("max_grad_norm=True", "max_grad_norm: 'True' is a bool, expected a float or None"),
        ("max_episode_steps=2.5", "max_episode_steps: '2.5' is a float, expected an int or None"),
        ("env_wrapper=1", "env_wrapper: '1' is a int, expected a str or None"),
        ("learning_rate=None", "learning_rate: None is not accepted, expected a float"),
    ],
)
def test_wrong_type_is_a_usage_error_naming_key_value_and_type(override, message):
    with pytest.raises(utility.UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        utility.apply_overrides(configs.debug(), [override])


def test_optional_keys_are_typed_when_resuming_a_saved_config():
    saved = dict(configs.debug(), target_kl=0.01)  # As read back from config.yaml.
    with pytest.raises(utility.UsageError, match="target_kl: 'abc'"):
        utility.apply_overrides(saved, ["target_kl=abc"])
