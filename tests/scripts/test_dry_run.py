"""`train --dry-run`: the run that would start, checked, and nothing written."""

import os
import re

from agents.scripts import train
from tests.scripts.capture import run_main


def test_dry_run_prints_the_run_budget_and_effective_config_and_writes_nothing(tmp_path):
    logdir = tmp_path / "logs"
    code, stdout, stderr = run_main(
        train.main,
        ["--config=pendulum", "--dry-run", f"--logdir={logdir}", "--seed=3", "--name=try",
         "--set", "learning_rate=1e-4", "train_steps=2000"],
    )  # fmt: skip
    assert code == 0, stderr
    lines = stdout.splitlines()
    assert lines[0].startswith(f"Dry run: would start {logdir}/") and lines[0].endswith(
        "-pendulum-try-s3."
    )
    assert lines[1] == (
        "Config pendulum with learning_rate=0.0001 (was 0.001), train_steps=2000 (was 100000)."
    )
    assert lines[2] == (
        "train_steps 2000 -> 2048 env steps, rounded up to 2 training calls of 16 envs x 64 steps."
    )
    assert lines[3] == "Effective config:"
    assert any(line.split() == ["learning_rate", "0.0001"] for line in lines[4:])
    assert not os.path.exists(logdir)


def test_dry_run_refuses_what_training_would_refuse_in_one_line(tmp_path):
    for argv, expected in [
        (["--set", "learning_rate=abc"], "learning_rate"),
        (["--set", "env=NoSuchEnv-v0"], "'NoSuchEnv-v0'"),
    ]:
        code, stdout, stderr = run_main(
            train.main, ["--config=debug", "--dry_run", f"--logdir={tmp_path}", *argv]
        )
        assert code == 2 and len(stderr.splitlines()) == 1 and expected in stderr, stderr
    assert os.listdir(tmp_path) == []


def test_a_run_on_an_env_given_from_python_says_how_to_resume_it():
    import pytest

    from agents.envs.python import environments

    for check in (
        lambda: environments.make_env("agents_api/MyEnv-v0"),
        lambda: environments.check_env("agents_api/MyEnv-v0", None),
    ):
        with pytest.raises(ValueError, match=r"agents.train\(resume=RUN_DIR, env=YOUR_ENV\)"):
            check()


def test_dry_run_names_the_layout_bank_a_native_minigrid_run_builds_and_its_cost(
    tmp_path, monkeypatch
):
    """A bank not yet cached: its env, its size (the run's budget's, or layout_bank), what is
    built before training starts and what while it trains, measured here; once cached, where it
    is (and no cost)."""
    from agents.envs.gridworld import layouts

    monkeypatch.setenv("AGENTS_CACHE", str(tmp_path / "cache"))
    argv = ["--config=keycorridor_rnd", "--dry-run", f"--logdir={tmp_path / 'logs'}", "--set"]
    argv += ["env=MiniGrid-FourRooms-v0", "train_steps=1"]
    code, stdout, stderr = run_main(train.main, argv)
    assert code == 0, stderr
    # One call of 128 envs x 128 steps x 4 rollouts draws at most 65,536 + 128 layouts.
    assert "Layout bank of MiniGrid-FourRooms-v0: 131,072 layouts from seed 0, not cached" in (
        stdout
    )
    argv[-1] = "layout_bank=40000"
    path = layouts.path_of("MiniGrid-FourRooms-v0", 40000, 0)
    code, stdout, stderr = run_main(train.main, argv)
    assert code == 0, stderr
    (line,) = [line for line in stdout.splitlines() if line.startswith("Layout bank of ")]
    assert line.startswith(
        "Layout bank of MiniGrid-FourRooms-v0: 40,000 layouts from seed 0, not cached: the run "
        "builds 8,192 first, in about "
    )
    assert re.search(r" then trains while \d+ process(es)? build the other 31,808 in about ", line)
    assert " layouts/s measured here in one process), " in line
    assert line.endswith(f"and caches it in {path}.")
    assert not path.parent.exists()  # Measured, not built.
    layouts.bank("MiniGrid-FourRooms-v0", 64)
    argv[-1] = "layout_bank=64"
    code, stdout, stderr = run_main(train.main, argv)
    assert code == 0, stderr
    cached = layouts.path_of("MiniGrid-FourRooms-v0", 64, 0)
    assert f"Layout bank of MiniGrid-FourRooms-v0: 64 layouts from seed 0, cached in {cached}." in (
        stdout.splitlines()
    )


def test_a_config_file_takes_floats_written_1e_minus_3_through_the_command_line(tmp_path):
    """YAML 1.1 (PyYAML's) reads `1e-3` without a dot as a string, which the config refused."""
    path = tmp_path / "config.yaml"
    path.write_text("config:\n  learning_rate: 1e-3\n  entropy_coef: 5E-3\nname: mine\n")
    code, stdout, stderr = run_main(
        train.main, [f"--config={path}", "--dry-run", f"--logdir={tmp_path / 'logs'}"]
    )
    assert code == 0, stderr
    lines = stdout.splitlines()
    assert any(line.split() == ["learning_rate", "0.001"] for line in lines)
    assert any(line.split() == ["entropy_coef", "0.005"] for line in lines)
