"""Environments that return what the API or their space do not allow, or fail to close.

The faulty env 1 of `faulty_envs` misbehaves in its 40th step, in the call from train env step 64
to 96; its message names the batch, the index, the id, what came and what was expected.
"""

import glob
import os

import gymnasium as gym
import numpy as np
import pytest

from agents import tools
from agents.scripts import train
from tests.scripts import faulty_envs
from tests.scripts.capture import run_main

_BOX = "Box(-1.0, 1.0, (3,), float32)"


def _train(tmp_path, env, *argv):
    argv = ["--config=debug", f"--logdir={tmp_path}", "--set", f"env={faulty_envs.env_id(env)}"]
    return run_main(train.main, [*argv, "--set", "checkpoint_every=64"])


@pytest.mark.parametrize(
    "fault, expected",
    [
        (
            "bad_shape",
            f"an observation of shape (4,) and dtype float32; expected shape (3,) of {_BOX}",
        ),
        (
            "string_observ",
            f"an observation of type str ('observation'); expected shape (3,) of {_BOX}",
        ),
        ("array_reward", "a reward of shape (2,) and dtype float64; expected a scalar number"),
        (
            "old_api",
            "4 values, the old gym API (observ, reward, done, info); expected the gymnasium API "
            "(observ, reward, terminated, truncated, info)",
        ),
    ],
)
def test_bad_env_output_is_one_line_naming_env_step_and_what_came(fault, expected, tmp_path):
    code, stdout, stderr = _train(tmp_path, f"Faulty-{fault}-v0")
    assert code == 1
    assert stderr == (
        f"error: Stopped at env step 78: Train environment 1 (Faulty-{fault}-v0) returned from "
        f"step {expected}.\n"
    )
    (run_dir,) = glob.glob(os.path.join(tmp_path, "*-debug*"))
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "ckpt-64.index"))


def test_env_whose_close_raises_leaves_a_finished_run_finished(tmp_path):
    code, stdout, stderr = _train(tmp_path, "Faulty-close-v0")
    assert code == 0
    assert stdout.splitlines()[-1].startswith("Done: 256 env steps")
    for batch in ("Train", "Eval"):
        for index in (0, 1):
            assert (
                f"warning: {batch} environment {index} (Faulty-close-v0) failed in close: "
                "RuntimeError: injected fault in close\n" in stderr
            )
    assert "Traceback" not in stderr


def test_eval_env_failure_names_the_eval_batch():
    envs = [gym.make(faulty_envs.env_id("Faulty-reset-v0")) for _ in range(2)]
    batch = tools.BatchEnv(envs, blocking=True, name="eval")
    batch.reset(seed=0)  # Env 1 is the faulty one.
    for _ in range(faulty_envs.FAULT_AFTER):
        batch.step(np.zeros((2, 1), np.float32))
    with pytest.raises(tools.BatchEnvError, match=r"^Eval environment 1 \(Faulty-reset-v0\) fail"):
        batch.reset([1])
