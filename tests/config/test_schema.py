"""Tests for the config schema: complete, documented, and in line with what the code accepts."""

import pytest

from agents.config import schema, validate
from agents.scripts import configs


def test_every_key_is_documented_grouped_and_its_default_valid():
    assert list(schema.GROUPS) == [
        "env",
        "schedule",
        "network",
        "optimization",
        "losses",
        "normalization",
        "pixel agent",
    ]
    for name, key in schema.KEYS.items():
        assert key.doc.strip().endswith("."), name
        assert validate.check_value(name, key.default) == key.default, name
    validate.validate_config(schema.defaults())


def test_world_size_is_no_config_value():
    assert "world_size" not in schema.KEYS and "world_size" not in configs.default()
    with pytest.raises(ValueError, match="Unknown config key 'world_size'"):
        validate.check_value("world_size", 2)


def test_closed_choices_match_what_the_code_builds():
    from agents.envs.python import environments
    from agents.ppo.networks import cnn_gru

    assert schema.KEYS["policy_size"].choices == tuple(cnn_gru.POLICY_SIZES)
    assert schema.KEYS["env_wrapper"].choices == environments.WRAPPERS


@pytest.mark.parametrize(
    "name, value, held",
    [("learning_rate", 1, 1.0), ("policy_layers", (4, 4), [4, 4]), ("target_kl", None, None)],
)
def test_check_value_widens_ints_and_tuples(name, value, held):
    assert validate.check_value(name, value) == held
    assert type(validate.check_value(name, value)) is type(held)


@pytest.mark.parametrize("name", sorted(set(configs.CONFIGS) - {"default"}))
def test_task_configs_state_only_differences_from_their_parent(name):
    config = configs.CONFIGS[name]
    differences = config.differences()
    parent = config.parent()
    restated = {k: v for k, v in differences.items() if parent[k] == v}
    assert not restated, f"{name} restates its parent's {restated}"
    assert set(differences) <= set(schema.KEYS)
    assert config() == {**parent, **differences}


def test_keys_of_the_plain_agent_leave_out_the_pixel_agent():
    ppo_keys = schema.keys_of("ppo")
    assert "int_coef" not in ppo_keys and "learning_rate" in ppo_keys
    assert "hidsize" in ppo_keys  # The CNN+GRU's sizes, for network=cnn_gru.
    # rnd_ppo reads the network keys too: its network on non-frame observations is chosen by them.
    assert "policy_layers" in schema.keys_of("rnd_ppo") and "rnd_hidden" in schema.keys_of(
        "rnd_ppo"
    )
    assert "rnd_hidden" not in ppo_keys
