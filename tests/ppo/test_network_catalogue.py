"""Every network of the catalogue builds a `Network` that keeps the contract; networks of the
user's come in by import path (the docs' example, trained); agents resolve to PPO classes."""

import os
import re
import sys

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf
import yaml

import agents
from agents.config import catalogue, schema
from agents.ppo.algorithm import PPO
from agents.ppo.networks.contract import Network
from agents.ppo.networks.mlp import make_network
from agents.scripts import configs
from agents.tools.checkpoints import list_checkpoints

DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "extending.md")

_SPACES = {
    "feed_forward_gaussian": (gym.spaces.Box(-1, 1, (3,)), gym.spaces.Box(-2, 2, (2,))),
    "feed_forward_categorical": (gym.spaces.Box(-1, 1, (3,)), gym.spaces.Discrete(4)),
    "feed_forward_multi_categorical": (
        gym.spaces.Box(-1, 1, (3,)),
        gym.spaces.MultiDiscrete([2, 3]),
    ),
    "recurrent_gaussian": (gym.spaces.Box(-1, 1, (3,)), gym.spaces.Box(-2, 2, (2,))),
    "recurrent_categorical": (gym.spaces.Box(0, 10, (7, 7, 3)), gym.spaces.Discrete(7)),
    "cnn_gru": (gym.spaces.Box(0, 255, (44, 44, 1), np.uint8), gym.spaces.Discrete(3)),
}


def _config(network: str) -> dict:
    return dict(schema.defaults(), network=network, hidsize=8, memsize=8)


def test_every_catalogue_network_is_tested_here():
    assert set(_SPACES) == set(catalogue.NETWORKS)


@pytest.mark.parametrize("name", sorted(catalogue.NETWORKS))
def test_each_network_keeps_the_contract(name):
    observation_space, action_space = _SPACES[name]
    network = make_network(observation_space, action_space, _config(name))
    assert isinstance(network, Network) and network.variables  # Built before any call.
    batch, time = 2, 3
    observ = tf.zeros([batch, time, *observation_space.shape])
    reset = tf.zeros([batch, time], tf.bool)
    output = network(observ, reset, network.initial_state(batch))
    assert output.policy.batch_shape == (batch, time)
    assert output.value.shape == (batch, time)
    assert output.state.shape[0] == batch
    assert network.policy_head is not None


def test_a_network_class_that_breaks_the_contract_is_refused_where_it_is_defined():
    with pytest.raises(TypeError, match=r"^Network Half lacks initial_state, policy_head \("):

        class Half(Network):
            def call(self, observ, reset, state):
                return None

    class Full(Network):  # Defined by a parent class counts as defined.
        def call(self, observ, reset, state):
            return None

        def initial_state(self, batch_size):
            return tf.zeros([batch_size, 0])

        policy_head = None

    class Child(Full):
        pass

    assert issubclass(Child, Network)


def test_auto_builds_the_network_of_the_action_space():
    network = make_network(*_SPACES["feed_forward_categorical"], _config("auto"))
    assert network.name == "feed_forward_categorical"


def test_a_builder_that_returns_no_network_is_refused(tmp_path, monkeypatch):
    (tmp_path / "plain_model.py").write_text(
        "import keras\ndef build(observation_space, action_space, config):\n"
        "    return keras.Sequential()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"built a Sequential, not an agents\.ppo\.network"):
        make_network(*_SPACES["feed_forward_gaussian"], _config("plain_model:build"))


@pytest.mark.parametrize("name", sorted(catalogue.AGENTS))
def test_each_agent_is_a_ppo(name):
    assert issubclass(catalogue.agent_class(name), PPO)


def _docs_example() -> str:
    with open(DOCS, encoding="utf-8") as file:
        text = file.read()
    start = text.index("in a file `linear_net.py`:")
    return re.search(r"```python\n(.*?)```", text[start:], re.S).group(1)


def test_the_docs_network_trains_and_is_recorded_by_its_path(tmp_path, monkeypatch):
    (tmp_path / "linear_net.py").write_text(_docs_example())
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("linear_net", None)
    config = dict(configs.debug.differences(), max_episode_steps=50)
    result = agents.train(
        config, logdir=str(tmp_path / "logdir"), network="linear_net:build", verbose=0
    )
    assert result.env_steps == 256 and np.isfinite(result.eval_score)
    with open(os.path.join(result.run_dir, "config.yaml")) as file:
        assert yaml.safe_load(file)["config"]["network"] == "linear_net:build"
    exported = agents.load_policy(result.run_dir)
    latest = list_checkpoints(os.path.join(result.run_dir, "checkpoints"))[-1]
    restored = agents.load_policy(result.run_dir, checkpoint=latest)  # Builds it by its path.
    observation = np.array([0.0, 1.0, 0.5], np.float32)
    np.testing.assert_allclose(exported(observation), restored(observation), rtol=1e-6)


@pytest.mark.slow
def test_plain_ppo_trains_the_cnn_gru_on_pixels(tmp_path):
    tiny = {k: v for k, v in configs.debug_rnd.differences().items() if not k.startswith("rnd_")}
    config = dict(
        tiny,
        agent="ppo",
        network="cnn_gru",
        env="MiniGrid-Empty-5x5-v0",
        env_wrapper="minigrid_pixels",
        max_episode_steps=20,
        normalize_observ=False,
    )
    result = agents.train(config, logdir=str(tmp_path), verbose=0)
    assert result.env_steps == 128
    policy = agents.load_policy(result.run_dir)
    frame = np.zeros(policy.observation_shape, np.uint8)
    assert 0 <= int(policy(frame)) < 7  # MiniGrid's seven actions.
