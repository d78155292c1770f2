"""Faults injected into training runs: failing, dying and non-finite environments, and kill -9.

The environments of `faulty_envs` fail at the faulty env's 40th step, after 39 steps of the batch
of 2 (78 train env steps): past the first checkpoint, at 64, and before the first evaluation.
"""

import glob
import os
import signal
import time

import numpy as np
import pytest
import tensorflow as tf

from agents.scripts import train
from tests.scripts import faulty_envs
from tests.scripts.capture import run_main, training_process

_FAILED_AT = 2 * (faulty_envs.FAULT_AFTER - 1)  # Train env steps made before the fault.


def _train(tmp_path, fault, *argv):
    """A debug run on `Faulty-<fault>-v0`; returns (exit code, stderr, run directory)."""
    env = faulty_envs.env_id(f"Faulty-{fault}-v0")
    argv = ["--config=debug", f"--logdir={tmp_path}", "--set", f"env={env}", *argv]
    argv += ["--set", "checkpoint_every=64"]
    code, stdout, stderr = run_main(train.main, argv)
    (run_dir,) = glob.glob(os.path.join(tmp_path, "*-debug*"))
    assert stdout.startswith(f"Starting run {run_dir}") and "Done" not in stdout
    return code, stderr, run_dir


def _children():
    """Pids of this process's child processes, zombies included, but multiprocessing's helper.

    Starting the first env process also starts multiprocessing's resource tracker, which lives as
    long as this process.
    """
    pids = set()
    for path in glob.glob("/proc/[0-9]*"):
        try:
            with open(f"{path}/stat") as stat, open(f"{path}/cmdline", "rb") as cmdline:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])  # Field 4: the parent.
                command = cmdline.read()
        except (OSError, IndexError, ValueError):  # Gone meanwhile.
            continue
        if parent == os.getpid() and b"multiprocessing.resource_tracker" not in command:
            pids.add(int(os.path.basename(path)))
    return pids


def _checkpoint_values(run_dir):
    """The latest checkpoint's path and its tensors by name."""
    path = tf.train.latest_checkpoint(os.path.join(run_dir, "checkpoints"))
    reader = tf.train.load_checkpoint(path)
    names = reader.get_variable_to_dtype_map()
    return path, {name: reader.get_tensor(name) for name in names if "OBJECT_GRAPH" not in name}


def _assert_only_first_checkpoint(run_dir):
    """The checkpoint written before the fault is the latest, whole and finite; none came after."""
    path, values = _checkpoint_values(run_dir)
    assert os.path.basename(path) == "ckpt-64"
    assert sorted(os.listdir(os.path.dirname(path))) == [
        "checkpoint",
        "ckpt-64.data-00000-of-00001",
        "ckpt-64.index",
    ]
    assert values["env_steps/.ATTRIBUTES/VARIABLE_VALUE"] == 64
    for name, value in values.items():
        if np.asarray(value).dtype.kind == "f":
            assert np.isfinite(value).all(), name


@pytest.mark.parametrize("fault, processes", [("step", False), ("reset", True)])
def test_raising_env_stops_naming_it_with_traceback(fault, processes, tmp_path):
    before = _children()
    code, stderr, run_dir = _train(tmp_path, fault, *(["--env_processes"] if processes else []))
    assert code == 1
    failed_at = _FAILED_AT if fault == "step" else 2 * 3 * faulty_envs.EPISODE_LENGTH
    assert stderr.startswith(
        f"error: Stopped at env step {failed_at}: Train environment 1 (Faulty-{fault}-v0) "
        f"failed in {fault}: "
    )
    assert "Traceback (most recent call last)" in stderr
    assert 'faulty_envs.py", line' in stderr and f"in {fault}\n" in stderr
    assert f"RuntimeError: injected fault in {fault}" in stderr
    _assert_only_first_checkpoint(run_dir)
    assert _children() == before


def test_killed_env_process_stops_within_seconds(tmp_path, monkeypatch):
    kill_time = tmp_path / "kill_time.txt"
    monkeypatch.setenv(faulty_envs.KILL_TIME_FILE, str(kill_time))
    before = _children()
    code, stderr, run_dir = _train(tmp_path / "logs", "kill", "--env_processes")
    stopped = time.time()
    assert code == 1
    assert stderr.startswith(
        f"error: Stopped at env step {_FAILED_AT}: Train environment 1 (Faulty-kill-v0) failed in "
        "step: Environment process "
    )
    assert stderr.rstrip().endswith("was killed by SIGKILL.")
    assert stopped - float(kill_time.read_text()) < 5  # Detected, reported and all closed.
    _assert_only_first_checkpoint(run_dir)
    assert _children() == before


@pytest.mark.parametrize("fault, what", [("nan_observ", "observation"), ("nan_reward", "reward")])
def test_non_finite_env_output_stops_naming_it_and_the_step(fault, what, tmp_path):
    code, stderr, run_dir = _train(tmp_path, fault)
    assert code == 1
    assert stderr.startswith(
        f"error: Stopped at env step {_FAILED_AT}: Train environment 1 (Faulty-{fault}-v0) "
        f"returned from step a non-finite {what}"
    )
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    _assert_only_first_checkpoint(run_dir)


def test_an_observation_far_outside_its_bounds_stops_before_it_reaches_the_normalizer(tmp_path):
    code, stderr, run_dir = _train(tmp_path, "far_observ")
    assert code == 1
    assert stderr.startswith(
        f"error: Stopped at env step {_FAILED_AT}: Train environment 1 (Faulty-far_observ-v0) "
        "returned from step an observation with 1e+30 at index (0,), far outside the declared "
        "bounds [-1.0, 1.0] of Box(-1.0, 1.0, (3,), float32)"
    )
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    _assert_only_first_checkpoint(run_dir)


@pytest.mark.slow
def test_non_finite_loss_stops_before_a_checkpoint_saves_it(tmp_path):
    # Unscaled, the returns of these rewards overflow: the update at 96 env steps meets them.
    code, stderr, run_dir = _train(tmp_path, "huge_reward", "--set", "normalize_reward=False")
    assert code == 1
    assert stderr == (
        "error: Stopped at env step 96: Non-finite loss in the PPO update at env step 96; the "
        "update was skipped and training stopped.\n"
    )
    _assert_only_first_checkpoint(run_dir)


@pytest.mark.slow
def test_kill_9_then_timestamp_resumes_from_the_latest_checkpoint(tmp_path):
    settings = ["--set", "train_steps=256", "--set", "checkpoint_every=64"]
    argv = ["--config=debug", f"--logdir={tmp_path}", *settings]
    with training_process(argv) as process:
        process.kill()
        assert process.wait(timeout=30) == -signal.SIGKILL
    (run_dir,) = glob.glob(os.path.join(tmp_path, "*-debug*"))
    saved = int(_checkpoint_values(run_dir)[1]["env_steps/.ATTRIBUTES/VARIABLE_VALUE"])
    assert 128 <= saved < 256  # Saved at the report seen, or later.
    timestamp = os.path.basename(run_dir).split("-")[0]
    code, stdout, stderr = run_main(train.main, argv + [f"--timestamp={timestamp}"])
    assert code == 0, stderr
    lines = stdout.splitlines()
    assert lines[0] == f"Resuming run {run_dir} at env step {saved}."
    assert lines[-1] == f"Done: 256 env steps in {run_dir}."
