"""Tests for the training command line: help, `--set`, config files, and answers before TF loads."""

import json
import os
import subprocess
import sys

import pytest
import yaml

from agents.config import files, schema
from agents.config.errors import UsageError
from agents.scripts import configs, train
from agents.training import run_dirs
from agents.training import run_setup as run_setup
from tests.scripts.capture import TIMESTAMP, run_main, untimed


def _cli(*argv):
    """The training command in a child process: (exit status, stdout, stderr, seconds)."""
    code = (
        "import sys, time; from agents.scripts import train; start = time.perf_counter(); "
        "code = train.main(sys.argv[1:]); "
        "print('tensorflow loaded' if 'tensorflow' in sys.modules else 'no tensorflow', "
        "file=sys.stderr); sys.exit(code)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120
    )
    return result.returncode, result.stdout, result.stderr


def test_help_lists_flags_with_defaults_configs_and_keys():
    result = subprocess.run(
        [sys.executable, "-m", "agents.scripts.train", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    assert "--seed SEED" in result.stdout and "config.yaml records, else 0)" in result.stdout
    assert "--logdir LOGDIR" in result.stdout and "(default: logdir)" in result.stdout
    assert "  pendulum       Pendulum-v1 in 100k env steps" in result.stdout
    assert "    learning_rate = 0.0003  (a float > 0)" in result.stdout
    assert "  pixel agent:" in result.stdout
    for key in schema.KEYS:
        assert f"    {key} = " in result.stdout, key


@pytest.mark.parametrize(
    "override, message",
    [
        ("learning_rate=-1", "learning_rate must be a float > 0, got -1.0."),
        ("num_minibatches=1000", "num_minibatches 1000 exceeds the 32 sequences of a rollout"),
        ("policy_loss=ppo2", "policy_loss must be one of clip, dual_clip, kl_penalty, got"),
    ],
)
def test_bad_value_is_one_line_before_tensorflow_loads(tmp_path, override, message):
    code, stdout, stderr = _cli("--config=debug", f"--logdir={tmp_path}", "--set", override)
    assert code == 2 and stdout == ""
    error, loaded = stderr.splitlines()
    assert error.startswith("error: ") and message in error
    assert loaded == "no tensorflow"
    assert os.listdir(tmp_path) == []  # No run directory for a run that never started.


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A debug run with two `--set` pairs, then a new run from its config.yaml."""
    logdir = str(tmp_path_factory.mktemp("logdir"))
    argv = ["--config=debug", f"--logdir={logdir}", "--set", "learning_rate=0.001", "seed=1"]
    assert run_main(train.main, argv)[0] == 2  # seed is a flag, not a config key.
    argv[-1] = "max_episode_steps=50"
    first = run_main(train.main, argv + ["--seed=7"])
    (first_dir,) = [os.path.join(logdir, name) for name in os.listdir(logdir)]
    second_logdir = str(tmp_path_factory.mktemp("second"))
    config_path = os.path.join(first_dir, "config.yaml")
    argv = [f"--config={config_path}", f"--logdir={second_logdir}", "--set", "train_steps=128"]
    second = run_main(train.main, argv)
    (second_dir,) = [os.path.join(second_logdir, name) for name in os.listdir(second_logdir)]
    return first, first_dir, second, second_dir


def _saved(run_dir):
    with open(os.path.join(run_dir, "config.yaml")) as handle:
        return yaml.safe_load(handle)


@pytest.mark.slow
def test_set_takes_several_pairs_and_config_yaml_holds_the_agents_keys(runs):
    (code, _, _), run_dir = runs[0], runs[1]
    assert code == 0
    saved = _saved(run_dir)
    assert saved["world_size"] == 1 and saved["name"] == "debug"
    config = saved["config"]
    assert config["learning_rate"] == 0.001 and config["max_episode_steps"] == 50
    assert set(config) == set(schema.keys_of("ppo"))  # No pixel-agent keys, no world_size.


def test_the_seed_is_recorded_and_a_saved_config_yaml_brings_it_back(runs):
    first_dir, second_dir = runs[1], runs[3]
    assert _saved(first_dir)["seed"] == 7 and _saved(second_dir)["seed"] == 7
    with (
        open(os.path.join(first_dir, "metrics.jsonl")) as a,
        open(os.path.join(second_dir, "metrics.jsonl")) as b,
    ):
        first, second = json.loads(a.readline()), json.loads(b.readline())
    # The first rollout's episodes are the seed's: equal scores, where seed 0 would differ.
    assert (first["env_steps"], first["score"]) == (second["env_steps"], second["score"])


def test_runs_started_in_the_same_second_get_a_directory_each(tmp_path, monkeypatch):
    import datetime

    class Frozen(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return cls(2026, 1, 2, 3, 4, 5)

    monkeypatch.setattr(run_dirs.datetime, "datetime", Frozen)
    paths = [run_dirs.new_run(str(tmp_path), "debug") for _ in range(3)]
    names = [os.path.basename(path) for path in paths]
    assert names == ["20260102T030405-debug", "20260102T030405-2-debug", "20260102T030405-3-debug"]
    assert run_dirs.timestamped_run(str(tmp_path), "debug", "20260102T030405-2") == paths[1]
    assert run_dirs.split_name(paths[1]) == ("20260102T030405-2", "debug")


def test_a_saved_config_yaml_starts_a_new_run(runs):
    first_dir, (code, stdout, _), second_dir = runs[1], runs[2], runs[3]
    assert code == 0, stdout
    assert os.path.basename(second_dir).endswith("-debug-s7")  # The seed its file records.
    first, second = _saved(first_dir)["config"], _saved(second_dir)["config"]
    assert second == {**first, "train_steps": 128}
    assert stdout.splitlines()[-1] == f"Done: 128 env steps in {second_dir}."


def test_config_yaml_with_fewer_keys_is_read_and_unknown_keys_are_named(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"name": "old", "world_size": 2, "config": {"env": "X-v0"}}))
    name, config, world_size = files.read_config_file(str(path))
    assert (name, world_size, config.env) == ("old", 2, "X-v0")
    assert config.hidsize == 128  # Missing keys: defaults.
    # A retired key of an older run is dropped: the run still resumes.
    path.write_text(yaml.safe_dump({"name": "old", "config": {"eval_steps": 1600}}))
    _, config, _ = files.read_config_file(str(path))
    assert "eval_steps" not in config and config.eval_episodes == 8
    path.write_text(yaml.safe_dump({"name": "old", "config": {"lerning_rate": 1.0}}))
    with pytest.raises(UsageError, match="Unknown config keys in .*: lerning_rate"):
        files.read_config_file(str(path))
    # A config key written beside `config:` would be silently lost: named instead.
    path.write_text(yaml.safe_dump({"name": "old", "config": {}, "learning_rate": 1e-3}))
    with pytest.raises(UsageError, match="holds 'learning_rate' beside `config:`; a config file"):
        files.read_config_file(str(path))


def test_resumed_run_takes_its_named_configs_values_for_keys_its_file_lacks(tmp_path):
    run_dir = tmp_path / "20000101T000000-debug"
    run_dir.mkdir()
    saved = {k: v for k, v in configs.debug().items() if k not in ("env_timeout", "log_every")}
    (run_dir / files.CONFIG_FILE).write_text(yaml.safe_dump({"name": "debug", "config": saved}))
    setup = run_setup.resumed_run("20000101T000000", expected_name="debug", logdir=str(tmp_path))
    config, resumed, seed = setup.config, setup.resumed, setup.seed
    assert seed == 0  # The file records no seed: the default.
    assert resumed and config["env_timeout"] == schema.KEYS["env_timeout"].default
    assert config["log_every"] == configs.debug()["log_every"] != schema.KEYS["log_every"].default


@pytest.mark.slow
def test_console_is_quiet_unless_verbose(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "TF_XLA_FLAGS")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    command = [sys.executable, "-m", "agents.scripts.train", "--config=debug"]
    command += [f"--logdir={tmp_path}", "--set", "max_episode_steps=50"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # No TensorFlow, absl or Python warning lines.
    # A pipe, as nohup's or SLURM's log: every line says when it was printed.
    lines = result.stdout.splitlines()
    assert lines and all(TIMESTAMP.match(line) for line in lines), result.stdout
    assert untimed(lines[-1]).startswith("Done: 256 env steps")
    # The compiled update went into the persistent XLA cache, for the next start.
    (cache,) = os.listdir(tmp_path / "cache" / "agents")
    assert any(
        name.startswith("xla_compile_cache")
        for name in os.listdir(tmp_path / "cache" / "agents" / cache)
    )


@pytest.mark.parametrize("verbose, user_level, level", [(False, None, "3"), (True, None, None),
                                                        (False, "1", "1")])  # fmt: skip
def test_log_level_is_set_before_tensorflow_loads_unless_verbose_or_set(
    verbose, user_level, level, monkeypatch
):
    """What `prepare` sets before TensorFlow loads (that `import_tensorflow` prepares first, in
    a fresh interpreter, is tests/runtime/test_tf_loading.py's)."""
    from agents.runtime import tf_loading

    environ = {
        k: v for k, v in os.environ.items() if k not in (tf_loading.LOG_LEVEL, tf_loading.OURS)
    }
    if user_level:
        environ[tf_loading.LOG_LEVEL] = user_level
    monkeypatch.setattr(tf_loading.os, "environ", environ)  # This test's, apart.
    monkeypatch.setattr(tf_loading.sys, "modules", {})  # As before TensorFlow loads.
    monkeypatch.setattr(tf_loading.compile_cache, "enable", lambda: None)
    tf_loading.prepare(verbose=verbose)
    monkeypatch.undo()  # sys.modules and os.environ back before anything else runs.
    assert environ.get(tf_loading.LOG_LEVEL) == level


@pytest.mark.slow
def test_an_env_id_whose_module_cannot_be_imported_is_one_line(tmp_path):
    code, stdout, stderr = _cli(
        "--config=debug", f"--logdir={tmp_path}", "--set", "env=nosuchmodule:Thing-v0"
    )
    assert code == 2 and stdout == ""
    error = stderr.splitlines()[0]
    assert error.startswith("error: Unknown environment 'nosuchmodule:Thing-v0': No module named")
    assert "Traceback" not in stderr and os.listdir(tmp_path) == []
