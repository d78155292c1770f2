"""Tests for the catalogues of agents and networks: names, import paths and what they resolve to."""

import dataclasses

import pytest

from agents.config import catalogue, schema, validate


def test_the_schema_takes_its_names_from_the_catalogues():
    assert tuple(catalogue.AGENTS) == schema.AGENTS
    assert schema.KEYS["network"].choices == ("auto", *catalogue.NETWORKS)


@pytest.mark.parametrize(
    "name, path",
    [
        ("my_nets:build", True),
        ("package.sub.nets:LinearNetwork", True),
        ("feed_forward_gaussian", False),
        ("nets:", False),
        ("a:b:c", False),
        ("my-nets:build", False),
        (3, False),
    ],
)
def test_an_import_path_is_module_colon_attribute(name, path):
    assert catalogue.is_import_path(name) is path


def test_the_network_key_takes_a_name_or_an_import_path():
    assert validate.check_value("network", "cnn_gru") == "cnn_gru"
    assert validate.check_value("network", "my_nets:build") == "my_nets:build"
    with pytest.raises(ValueError) as raised:
        validate.check_value("network", "linear")
    assert str(raised.value).startswith("network must be one of auto, feed_forward_gaussian")
    assert str(raised.value).endswith("or a 'module:attribute' path, got 'linear'.")


def test_auto_picks_the_network_of_the_action_space():
    assert catalogue.network_builder("auto", "Discrete")[0] == "feed_forward_categorical"
    assert catalogue.network_builder("auto", "MultiDiscrete")[0] == (
        "feed_forward_multi_categorical"
    )
    with pytest.raises(ValueError, match=r"no network for the action space Tuple; accepted: Box"):
        catalogue.network_builder("auto", "Tuple")


@pytest.mark.parametrize(
    "path, message",
    [
        ("no_such_module_here:build", "Network 'no_such_module_here:build': cannot import"),
        ("agents.config.catalogue:nothing", "'agents.config.catalogue' has no 'nothing'"),
    ],
)
def test_a_path_that_does_not_import_is_one_line(path, message):
    with pytest.raises(ValueError) as raised:
        catalogue.network_builder(path, "Box")
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_native_envs_are_refused_for_an_agent_the_catalogue_says_cannot_train_them(monkeypatch):
    entry = dataclasses.replace(catalogue.AGENTS["rnd_ppo"], native_envs=False)
    monkeypatch.setitem(catalogue.AGENTS, "rnd_ppo", entry)
    config = dict(schema.defaults(), agent="rnd_ppo", native_env=True, env="CartPole-v1")
    with pytest.raises(ValueError, match=r"agent='rnd_ppo' learns from Python .* train ppo\."):
        validate.validate_config(config)


def test_both_agents_train_native_envs():
    for agent in ("ppo", "rnd_ppo"):
        config = dict(schema.defaults(), agent=agent, native_env=True, env="CartPole-v1")
        validate.validate_config(config)
