"""Tests for TensorFlow's process settings made before it loads (no TensorFlow needed here)."""

import os
import subprocess
import sys

from agents.training import tf_defaults


def test_the_pixel_agent_gets_onednn_and_the_dense_agent_not():
    assert tf_defaults.defaults("rnd_ppo") == {"TF_ENABLE_ONEDNN_OPTS": "1"}
    assert tf_defaults.defaults("ppo") == {"TF_ENABLE_ONEDNN_OPTS": "0"}


def test_the_quiet_import_applies_them_before_tensorflow_loads():
    # A fresh interpreter: TensorFlow reads the variables only when it loads.
    code = (
        "import os, sys\n"
        "from agents.training import tf_loading\n"
        "tf_loading.import_tensorflow()\n"
        "assert 'tensorflow' in sys.modules\n"
        "print(os.environ['TF_ENABLE_ONEDNN_OPTS'])\n"
    )
    environ = {key: value for key, value in os.environ.items() if key != tf_defaults.ONEDNN}
    result = subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["0"]


def test_settings_agents_made_are_its_own_in_child_processes_and_the_users_are_kept():
    """A script that imported agents (ppo's settings) runs a pixel agent's training in a child:
    the child sets its agent's oneDNN; a value the user set stays in both."""
    child = (
        "from agents.training import tf_loading; tf_loading.prepare('rnd_ppo'); "
        "import os; print(os.environ['TF_ENABLE_ONEDNN_OPTS'])"
    )
    parent = (
        "import os, subprocess, sys; import agents; print(os.environ['TF_ENABLE_ONEDNN_OPTS']); "
        f"sys.stdout.flush(); subprocess.run([sys.executable, '-c', {child!r}])"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "AGENTS_"))}
    for user, expected in [(None, ["0", "1"]), ("0", ["0", "0"])]:
        run_env = dict(env, TF_ENABLE_ONEDNN_OPTS=user) if user else env
        result = subprocess.run(
            [sys.executable, "-c", parent], capture_output=True, text=True, env=run_env
        )
        assert result.stdout.split() == expected, result.stderr
