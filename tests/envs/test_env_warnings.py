"""Tests for third-party warnings of environments: once per process, and no MUJOCO_LOG.TXT."""

import os
import pathlib
import subprocess
import sys
import types
import warnings

import pytest

from agents.envs.python import env_warnings

ROOT = str(pathlib.Path(__file__).parent.parent.parent)
SETTOTALMASS = "compiler attribute 'settotalmass' is deprecated"

# Makes 4 HalfCheetah-v5 envs as training does and steps them; MuJoCo 4.0 warns about the
# deprecated `settotalmass` of the cheetah's model once for each model it compiles.
_MAKE_ENVS = """
from agents.envs.python import environments
envs = environments.make_envs("HalfCheetah-v5", 4, processes={processes})
for seed, env in enumerate(envs):
    env.reset(seed=seed)
    for _ in range(10):
        env.step(env.action_space.sample())
    env.close()
"""


def _python(code, cwd, *options):
    """Run `code` in a fresh interpreter in `cwd`, importing this checkout's `agents`."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    command = [sys.executable, *options, "-c", code]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("processes", [False, True])
def test_mujoco_warns_once_per_process_and_writes_no_log_file(tmp_path, processes):
    pytest.importorskip("mujoco")
    result = _python(_MAKE_ENVS.format(processes=processes), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr.count(SETTOTALMASS) == 1, result.stderr
    assert "MujocoWarning: " + SETTOTALMASS in result.stderr  # A Python warning, filterable.
    assert os.listdir(tmp_path) == []  # No MUJOCO_LOG.TXT in the working directory.


def test_a_warning_callback_and_log_file_of_the_user_are_kept(tmp_path):
    pytest.importorskip("mujoco")
    code = (
        "import mujoco\n"
        "heard = []\n"
        "mujoco.set_mju_user_warning(heard.append)\n"
        "config = mujoco.MjLogConfig.get()\n"
        "config.logfile = 'mine.log'\n"
        "config.set()\n"
        + _MAKE_ENVS.format(processes=False)
        + "print(sum('settotalmass' in message for message in heard))\n"
        "print(mujoco.MjLogConfig.get().logto_file)\n"
    )
    result = _python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["4", "True"]
    assert result.stderr == ""


def test_warnings_as_errors_do_not_abort_mujoco(tmp_path):
    # An exception raised into MuJoCo's C code would abort the interpreter.
    pytest.importorskip("mujoco")
    result = _python(_MAKE_ENVS.format(processes=False), tmp_path, "-W", "error")
    assert result.returncode == 0, result.stderr
    assert "MuJoCo warning: " + SETTOTALMASS in result.stderr


def test_other_envs_do_not_load_mujoco(tmp_path):
    code = (
        "import sys\n"
        "from agents.envs.python import environments\n"
        "environments.make_env('CartPole-v1').close()\n"
        "print('mujoco' in sys.modules)\n"
    )
    result = _python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False"]


def _warns():
    warnings.warn("a deprecated argument", UserWarning, stacklevel=1)
    warnings.warn("an old API", DeprecationWarning, stacklevel=1)
    return types.SimpleNamespace()


def test_warnings_recorded_in_env_processes_are_shown_once_under_this_process_filters():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore")  # Filters of the env process: all are recorded anyway.
        envs = [env_warnings.record(_warns) for _ in range(3)]
        assert caught == []
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default")  # Each once per place it is raised at.
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        for env in envs:
            env_warnings.show_recorded(env)
    assert [(str(item.message), item.category) for item in shown] == [
        ("a deprecated argument", UserWarning)
    ]
    assert shown[0].filename == __file__  # Where the env raised it.
    assert shown[0].lineno == _warns.__code__.co_firstlineno + 1


def test_an_env_without_recorded_warnings_shows_none():
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        env_warnings.show_recorded(types.SimpleNamespace())
    assert shown == []
