"""Tests for Config: checked once where it enters, immutable, pickled, and read everywhere below."""

import collections
import os
import pickle

import pytest

import agents
from agents.config import files, validate, values
from agents.config.config import Config
from agents.config.errors import UsageError
from agents.scripts import configs
from agents.training import Callback, Trainer


def test_a_config_is_read_only_and_reads_by_attribute_or_item():
    config = Config.build(configs.debug())
    assert config.train_steps == config["train_steps"] == 256
    with pytest.raises(AttributeError, match=r"read-only: use config.replace"):
        config.train_steps = 512
    with pytest.raises(AttributeError, match="no key 'nope'"):
        config.nope  # noqa: B018
    with pytest.raises(TypeError, match="Config.build"):
        Config({"train_steps": 1})


def test_replace_checks_what_it_sets_and_the_rules():
    config = Config.build(configs.debug())
    assert config.replace({"train_steps": 512}).train_steps == 512 and config.train_steps == 256
    with pytest.raises(UsageError, match=r"^train_steps=0: train_steps must be an int >= 1"):
        config.replace({"train_steps": 0})
    with pytest.raises(UsageError, match="must be a multiple of chunk_length"):
        config.replace({"chunk_length": 5})


def test_a_key_the_agent_does_not_read_is_refused_not_ignored():
    config = Config.build(configs.debug())
    assert config.agent == "ppo"
    message = (
        "^bonus='noveld': the ppo agent does not read bonus, so the run would ignore it; "
        r"rnd_ppo reads it \(agent=rnd_ppo\).$"
    )
    with pytest.raises(UsageError, match=message):
        Config.build(configs.debug(), {"bonus": "noveld", "int_coef": 0.5})
    with pytest.raises(UsageError, match="^int_coef=0.5: the ppo agent does not read"):
        config.replace({"int_coef": 0.5})
    # Set with the agent that reads them, the same keys are taken.
    chosen = Config.build(configs.debug(), {"agent": "rnd_ppo", "bonus": "noveld"})
    assert (chosen.agent, chosen.bonus) == ("rnd_ppo", "noveld")
    # Keys of every agent a config holds (the whole schema) are no override: accepted.
    assert Config.build(config).bonus == "rnd"


def test_a_dict_config_refuses_a_changed_key_its_agent_does_not_read(tmp_path):
    with pytest.raises(ValueError, match="^int_coef=0.3: the ppo agent does not read int_coef"):
        agents.train({**configs.debug(), "int_coef": 0.3}, logdir=str(tmp_path), verbose=0)
    assert os.listdir(tmp_path) == []


def test_build_names_a_missing_key():
    incomplete = {k: v for k, v in configs.debug().items() if k != "discount"}
    with pytest.raises(UsageError, match="^The config lacks the keys discount.$"):
        Config.build(incomplete)


def test_a_config_pickles_as_mpi_sends_it_and_equals_its_items():
    config = Config.build(configs.debug(), {"learning_rate": 1e-3})
    copy = pickle.loads(pickle.dumps(config))
    assert isinstance(copy, Config) and copy == config == dict(config)


@pytest.fixture
def counted(monkeypatch):
    """Counts the checks of each config key's value."""
    counts = collections.Counter()
    check = validate.check_value

    def counting(name, value):
        counts[name] += 1
        return check(name, value)

    monkeypatch.setattr(validate, "check_value", counting)
    return counts


class StopAtStart(Callback):
    def on_start(self, run):  # The envs and agent are built by now.
        run.stop("enough")


def test_a_set_value_is_checked_once_from_the_command_line_to_the_agent(tmp_path, counted):
    overrides = values.parse_overrides(["learning_rate=0.00123"])
    trainer = Trainer("debug", str(tmp_path), overrides=overrides)
    result = trainer.train(callbacks=[StopAtStart()])
    assert result.stopped_by == "enough"
    assert counted["learning_rate"] == 1
    # config.yaml round-trips it: read back, the same config.
    assert files.load_config(result.run_dir) == trainer.config


def test_a_keyword_of_train_is_checked_once(tmp_path, counted):
    result = agents.train(
        "debug", logdir=str(tmp_path), learning_rate=0.00123, callbacks=[StopAtStart()]
    )
    assert counted["learning_rate"] == 1 and os.path.isdir(result.run_dir)
