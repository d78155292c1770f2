"""The library as a guest in a user's process: what loading a trained policy prints."""

import glob
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = str(pathlib.Path(__file__).parent.parent.parent)

_LOAD = """
import numpy as np
from agents import load_policy
for checkpoint in (None, {checkpoint!r}):  # The exported SavedModel, then a checkpoint.
    policy = load_policy({run_dir!r}, checkpoint=checkpoint)
    print(policy(np.zeros(policy.observation_shape)).shape)
"""


@pytest.mark.slow
def test_load_policy_in_a_fresh_process_prints_no_tensorflow_lines(finished_run, tmp_path):
    (checkpoint, *_) = glob.glob(os.path.join(finished_run, "checkpoints", "*.index"))
    code = _LOAD.format(run_dir=finished_run, checkpoint=checkpoint[: -len(".index")])
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "TF_XLA_FLAGS")}
    env.update(PYTHONPATH=ROOT, XDG_CACHE_HOME=str(tmp_path / "cache"))
    command = [sys.executable, "-c", code]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == ("(1,)\n(1,)\n", "")
