"""Tests for TensorFlow's process settings made before it loads (no TensorFlow needed here)."""

import os
import subprocess
import sys

from agents.training import tf_defaults


def test_defaults_are_added_and_the_users_values_kept():
    environ = {"PATH": "/bin"}
    assert tf_defaults.configure(environ) == {"TF_ENABLE_ONEDNN_OPTS": "0"}
    assert environ == {"PATH": "/bin", "TF_ENABLE_ONEDNN_OPTS": "0"}
    assert tf_defaults.configure(environ) == {}
    mine = {"TF_ENABLE_ONEDNN_OPTS": "1"}
    assert tf_defaults.configure(mine) == {} and mine == {"TF_ENABLE_ONEDNN_OPTS": "1"}


def test_the_pixel_agent_gets_onednn_and_the_dense_agent_not():
    assert tf_defaults.configure({}, agent="rnd_ppo") == {"TF_ENABLE_ONEDNN_OPTS": "1"}
    assert tf_defaults.configure({}, agent="ppo") == {"TF_ENABLE_ONEDNN_OPTS": "0"}


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
