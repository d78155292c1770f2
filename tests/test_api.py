"""Tests for the Python API: `from agents import train, load_policy`."""

import json
import math
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import agents
from agents.scripts import configs


def test_import_agents_is_light_and_names_the_api():
    code = (
        "import sys, agents; light = 'tensorflow' not in sys.modules; "
        "from agents import train, load_policy; print(light, train.__module__)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.split() == ["True", "agents.api"]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        agents.nope  # noqa: B018


def short_pendulum():
    return gym.make("Pendulum-v1", max_episode_steps=50)


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """A debug run from a dict config, a callable env and an override."""
    logdir = str(tmp_path_factory.mktemp("logdir"))
    config = configs.debug.differences()  # Partial: the other keys take their defaults.
    return agents.train(config, logdir=logdir, seed=3, env=short_pendulum, learning_rate=1e-3)


def test_train_returns_the_run_directory_and_final_eval_score(result):
    assert os.fspath(result) == result.run_dir and os.path.isdir(result.run_dir)
    assert result.env_steps == 256 and result.exit_status == 0
    assert math.isfinite(result.eval_score)  # Episodes of 50 steps end in every eval phase.
    with open(os.path.join(result.run_dir, "metrics.jsonl")) as handle:
        records = [json.loads(line) for line in handle]
    assert [(r["phase"], r["env_steps"]) for r in records] == [
        ("train", 128),
        ("eval", 128),
        ("train", 256),
        ("eval", 256),
    ]
    assert records[-1]["score"] == pytest.approx(result.eval_score)
    assert "policy_loss" in records[0] and "env_steps_per_second" in records[0]


def test_load_policy_acts_on_one_observation_or_a_batch(result):
    policy = agents.load_policy(result.run_dir)
    batch = np.random.default_rng(0).uniform(-1, 1, (5, 3))  # float64, as gymnasium gives them.
    actions = policy(batch)
    assert actions.shape == (5, 1) and actions.dtype == np.float32
    np.testing.assert_allclose(policy(batch[2]), actions[2], rtol=1e-6)
    np.testing.assert_array_equal(policy(batch), actions)  # Deterministic.


def test_bad_input_raises_value_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match="learning_rate must be a float > 0, got -1.0"):
        agents.train("debug", logdir=str(tmp_path), learning_rate=-1.0)
    with pytest.raises(ValueError, match="Unknown config keys: lerning_rate"):
        agents.train({"lerning_rate": 1.0}, logdir=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="No exported policy"):
        agents.load_policy(str(tmp_path))
