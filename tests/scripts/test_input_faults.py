"""Bad input met by a long run's owner: damaged config files, bad settings, odd paths, early Ctrl-C.

Each is one line naming the bad value and what is accepted, and leaves what was written intact.
"""

import glob
import os
import shlex
import signal

import pytest

from agents.config import files
from agents.scripts import configs, train, visualize
from agents.training import reporting
from agents.training import run as run_module
from tests.scripts import faulty_envs
from tests.scripts.capture import run_main

_TIMESTAMP = "20000101T000000"


def _run(argv):
    return run_main(train.main, argv)


@pytest.mark.parametrize(
    "damage, expected",
    [
        (lambda text: "config: {name: [unclosed\n", "is not valid YAML (line 2)"),
        (lambda text: "", "is empty"),
        (lambda text: text[: text.index("\n", len(text) // 2) + 1], "is incomplete (no name)"),
        (lambda text: "- a list\n", "is incomplete (no config, name)"),
    ],
)
def test_damaged_config_yaml_is_one_line(damage, expected, tmp_path):
    run_dir = tmp_path / f"{_TIMESTAMP}-debug"
    run_dir.mkdir()
    files.save_config(configs.debug(), str(run_dir), "debug")
    path = run_dir / files.CONFIG_FILE
    path.write_text(damage(path.read_text()))
    before = path.read_text()
    code, stdout, stderr = _run(
        ["--config=debug", f"--logdir={tmp_path}", f"--timestamp={_TIMESTAMP}"]
    )
    assert code == 2 and stdout == ""
    assert stderr == f"error: {str(path)!r} {expected}: restore it from a backup.\n"
    assert path.read_text() == before


@pytest.mark.parametrize(
    "setting, expected",
    [
        ("checkpoint_every=0", "checkpoint_every must be an int >= 1, got 0."),
        ("checkpoint_every=-64", "checkpoint_every must be an int >= 1, got -64."),
        ("max_episode_steps=-1", "max_episode_steps must be an int >= 1 or None, got -1."),
        ("env_timeout=0", "env_timeout must be a float > 0.0 or None, got 0.0."),
        ("env_timeout=soon", "env_timeout must be a float > 0.0 or None, got 'soon'."),
    ],
)
def test_bad_run_setting_is_one_line_and_leaves_no_run(setting, expected, tmp_path):
    code, stdout, stderr = _run(["--config=debug", f"--logdir={tmp_path}", "--set", setting])
    assert code == 2 and stdout == ""
    assert stderr == f"error: Bad value in --set {setting}: {expected}\n"
    assert os.listdir(tmp_path) == []


def test_a_key_the_agent_does_not_read_is_one_line_and_leaves_no_run(tmp_path):
    argv = ["--config=debug", f"--logdir={tmp_path}", "--set", "bonus=noveld", "int_coef=0.5"]
    code, stdout, stderr = _run(argv)
    assert code == 2 and stdout == ""
    assert stderr == (
        "error: bonus='noveld': the ppo agent does not read bonus, so the run would ignore it; "
        "rnd_ppo reads it (agent=rnd_ppo).\n"
    )
    assert os.listdir(tmp_path) == []


def test_gsde_on_discrete_actions_is_one_line_and_leaves_no_run(tmp_path):
    argv = ["--config=debug", f"--logdir={tmp_path}", "--set", "env=CartPole-v1"]
    code, stdout, stderr = _run([*argv, "sde_sample_freq=4"])
    assert code == 2 and stdout == ""
    assert stderr == (
        "error: sde_sample_freq applies to Gaussian policies (a Box action space); network "
        "'feed_forward_categorical' for Discrete(2) needs sde_sample_freq None.\n"
    )
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("seed", ["-1", "2147483648", "x"])
def test_bad_seed_is_a_usage_error(seed, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--config=debug", f"--logdir={tmp_path}", f"--seed={seed}"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.endswith(f"error: argument --seed: '{seed}' is not an integer") or error.endswith(
        f"error: argument --seed: '{seed}' is not an integer in [0, 2147483647]"
    )
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("episodes", ["0", "-1"])
def test_visualize_needs_a_positive_number_of_episodes(episodes, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        visualize.main(
            ["--run_dir", str(tmp_path), "--outdir", str(tmp_path), "--num_episodes", episodes]
        )
    assert exit_info.value.code == 2
    assert (
        capsys.readouterr()
        .err.splitlines()[-1]
        .endswith(
            f"error: argument --num_episodes: '{episodes}' is not a positive integer (1, 2, ...)"
        )
    )


def test_resume_command_is_shell_quoted(tmp_path, monkeypatch):
    format_report = reporting.report_line

    def format_and_terminate(report, *args):
        signal.raise_signal(signal.SIGTERM)
        return format_report(report, *args)

    monkeypatch.setattr(reporting, "report_line", format_and_terminate)
    logdir = str(tmp_path / "my runs; $HOME")
    code, _, stderr = _run(["--config=debug", f"--logdir={logdir}"])
    assert code == 128 + signal.SIGTERM
    (run_dir,) = glob.glob(os.path.join(glob.escape(logdir), "*-debug*"))
    command = stderr.splitlines()[-1].split("Resume with: ", 1)[1]
    assert shlex.split(command) == [
        "python",
        "-m",
        "agents.scripts.train",
        "--config=debug",
        f"--logdir={logdir}",
        f"--timestamp={os.path.basename(run_dir)}",  # Its whole name: unambiguous.
    ]


def test_ctrl_c_during_start_up_leaves_no_run_directory(tmp_path, monkeypatch):
    build = run_module.Run

    def interrupted_build(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)  # While TensorFlow and the envs start.
        return build(*args, **kwargs)

    monkeypatch.setattr(run_module, "Run", interrupted_build)
    code, stdout, stderr = _run(["--config=debug", f"--logdir={tmp_path}"])
    assert code == 128 + signal.SIGINT and stdout == ""
    assert stderr.startswith("Interrupted during start-up; removed the new run directory ")
    assert stderr.count("\n") == 1
    assert os.listdir(tmp_path) == []


def test_uint8_observations_train_with_normalize_observ(tmp_path):
    env = faulty_envs.env_id("BytesObservation-v0")
    code, stdout, stderr = _run(["--config=debug", f"--logdir={tmp_path}", "--set", f"env={env}"])
    assert code == 0, stderr
    assert stdout.splitlines()[-1].startswith("Done: 256 env steps")


def test_an_env_without_a_time_limit_is_refused_naming_the_key_and_leaves_no_run(tmp_path):
    # Evaluation plays whole episodes: with no limit one might never end.
    env = faulty_envs.env_id("Unlimited-v0")
    code, stdout, stderr = _run(["--config=debug", f"--logdir={tmp_path}", "--set", f"env={env}"])
    assert code == 2 and stdout == ""
    assert stderr == (
        f"error: Evaluation plays whole episodes, but {env!r} has no time limit: set "
        "max_episode_steps (e.g. --set max_episode_steps=1000).\n"
    )
    assert os.listdir(tmp_path) == []
    # The key named is the way out.
    argv = ["--config=debug", f"--logdir={tmp_path}", "--set", f"env={env}"]
    code, stdout, stderr = _run([*argv, "max_episode_steps=1000"])
    assert code == 0, stderr


def test_a_retired_key_names_what_replaced_it(tmp_path):
    argv = ["--config=debug", f"--logdir={tmp_path}", "--set", "eval_steps=64"]
    code, stdout, stderr = _run(argv)
    assert code == 2 and "(retired: evaluation plays whole episodes: set eval_episodes)" in stderr
    assert os.listdir(tmp_path) == []


def test_a_config_yaml_with_aliases_is_refused_at_once(tmp_path):
    # A "billion laughs": nine levels of nine aliases would expand to 10^9 strings.
    lines = ['a0: &a0 ["x"]'] + [
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)
    ]
    path = tmp_path / "config.yaml"
    path.write_text("config:\n" + "\n".join("  " + line for line in lines) + "\nname: bomb\n")
    code, stdout, stderr = _run([f"--config={path}", f"--logdir={tmp_path / 'logs'}"])
    assert code == 2 and stdout == ""
    assert stderr.startswith(f"error: {str(path)!r} is not valid YAML (line 3)")
