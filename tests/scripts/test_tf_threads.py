"""Tests for TensorFlow's process settings made before it loads (no TensorFlow needed)."""

import os
import subprocess
import sys

from agents.scripts import tf_threads


def test_defaults_are_added_and_the_users_values_kept():
    environ = {"TF_ENABLE_ONEDNN_OPTS": "1", "PATH": "/bin"}
    added = tf_threads.configure(environ)
    assert added == {"TF_NUM_INTEROP_THREADS": "1"}
    assert environ == {"TF_ENABLE_ONEDNN_OPTS": "1", "TF_NUM_INTEROP_THREADS": "1", "PATH": "/bin"}
    assert tf_threads.configure(environ) == {}


def test_the_quiet_import_applies_them_before_tensorflow_loads():
    # A fresh interpreter: TensorFlow reads the variables only when it loads.
    code = (
        "import os, sys\n"
        "from agents.scripts import console\n"
        "console.import_tensorflow()\n"
        "assert 'tensorflow' in sys.modules\n"
        "print(os.environ['TF_NUM_INTEROP_THREADS'], os.environ['TF_ENABLE_ONEDNN_OPTS'])\n"
    )
    environ = {key: value for key, value in os.environ.items() if key not in tf_threads.DEFAULTS}
    result = subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["1", "0"]
