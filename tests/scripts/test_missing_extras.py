"""A config whose env needs an extra that is not installed: one line with the install command,
from a run and from `--dry-run` alike, before anything is written."""

import json
import os
import subprocess
import sys

import pytest

# A child process in which `MISSING` cannot be imported (None in sys.modules makes `import`
# raise ImportError, as for a package that is not installed); it runs the training command's
# `main` once per argv of its first argument and prints each (exit status, stderr) as JSON.
_CHILD = """
import contextlib, io, json, sys
for name in sys.argv[2].split(","):
    sys.modules[name] = None
from agents.scripts import train
results = []
for argv in json.loads(sys.argv[1]):
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        results.append((train.main(argv), stderr.getvalue()))
print(json.dumps(results))
"""


def _without(modules, *argvs):
    """Each argv's (exit status, stderr) from one child process lacking `modules`."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    command = [sys.executable, "-c", _CHILD, json.dumps(argvs), ",".join(modules)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.slow
def test_a_missing_extra_is_one_line_with_its_install_command_in_a_run_and_a_dry_run(tmp_path):
    logdir = f"--logdir={tmp_path}"
    cheetah = ["--config=cheetah", logdir, "--set", "train_steps=1"]
    results = _without(
        ["mujoco", "ale_py", "minigrid"],
        [*cheetah, "--dry-run"],
        cheetah,
        ["--config=cheetah", logdir, "--set", "env_processes=True", "--dry-run"],
        ["--config=montezuma_rnd", logdir, "--dry-run"],
        ["--config=minigrid_rnd", logdir, "--dry-run"],
    )
    mujoco = 'error: HalfCheetah-v5 needs the mujoco package: pip install -e ".[mujoco]".\n'
    assert results[:3] == [[2, mujoco]] * 3
    atari = 'error: ALE/MontezumaRevenge-v5 needs the ale_py package: pip install -e ".[atari]".\n'
    assert results[3] == [2, atari]
    minigrid = 'MiniGrid-Empty-16x16-v0 needs the minigrid package: pip install -e ".[minigrid]".'
    assert results[4] == [2, f"error: {minigrid}\n"]
    assert os.listdir(tmp_path) == []  # Nothing written, not even an empty run directory.


@pytest.mark.slow
def test_envpool_steps_mujoco_envs_without_the_mujoco_extra_in_a_dry_run(tmp_path):
    pytest.importorskip("envpool")
    argv = ["--config=cheetah", f"--logdir={tmp_path}", "--set", "env_backend=envpool"]
    ((code, stderr),) = _without(["mujoco"], [*argv, "--dry-run"])
    assert code == 0 and stderr == ""


# A child lacking `MISSING` that runs each (script module, argv) with that script's `main`.
_SCRIPTS_CHILD = """
import contextlib, importlib, io, json, sys
for name in sys.argv[2].split(","):
    sys.modules[name] = None
results = []
for module, argv in json.loads(sys.argv[1]):
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        results.append((importlib.import_module(module).main(argv), stderr.getvalue()))
print(json.dumps(results))
"""


@pytest.mark.slow
def test_tuning_without_optuna_and_videos_without_imageio_are_one_line_each(tmp_path):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    runs = [
        ("agents.scripts.tune", ["--config=pendulum", "--trials=1", f"--logdir={tmp_path}/tune"]),
        ("agents.scripts.visualize", [f"--logdir={tmp_path}", f"--outdir={tmp_path}/videos"]),
    ]
    command = [sys.executable, "-c", _SCRIPTS_CHILD, json.dumps(runs), "optuna,imageio.v2"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    tune, visualize = json.loads(result.stdout.splitlines()[-1])
    assert tune == [2, 'error: Tuning needs Optuna: pip install -e ".[tune]".\n']
    assert visualize == [2, "error: Writing videos needs imageio: pip install -e '.[video]'.\n"]
    assert os.listdir(tmp_path) == []  # No study database, no video folder.
